import TandemCore

/// A change a write transaction made to a zone's change feed (`record_changes`, and
/// `share_exits` when the record left a share), as the store logged it, in order.
///
/// Whatever the feed shows, the transaction's notification must also carry (DESIGN.md §3:
/// changes are published after commit): services build their `ChangeEvent` from these rather
/// than from their own notes of what they wrote, so no write path can change the feed silently.
public struct LoggedChange: Sendable, Hashable {
    public var zoneKey: Int64
    public var recordName: String
    public var recordType: String
    /// A tombstone.
    public var deleted: Bool
    /// The share whose hierarchy holds the record after the change (for a tombstone: held it).
    public var membership: String?
    /// The share it was in before, when the change moved it out of one.
    public var previousMembership: String?

    public init(zoneKey: Int64, recordName: String, recordType: String, deleted: Bool, membership: String?, previousMembership: String?) {
        self.zoneKey = zoneKey
        self.recordName = recordName
        self.recordType = recordType
        self.deleted = deleted
        self.membership = membership
        self.previousMembership = previousMembership
    }
}

/// The changes one write transaction logged so far; a rolled-back savepoint takes its own back.
/// For the backends (`package`): each keeps one per write transaction for `loggedChanges()`.
package final class TransactionChangeLog: Sendable {
    private let entries = Locked<[LoggedChange]>([])

    package init() {}

    package func append(_ change: LoggedChange) { entries.withLock { $0.append(change) } }

    package var count: Int { entries.withLock { $0.count } }

    /// Forgets every entry after the first `count` (a savepoint rolled back).
    package func truncate(to count: Int) { entries.withLock { $0.removeSubrange(min(count, $0.count)...) } }

    package var all: [LoggedChange] { entries.withLock { $0 } }
}
