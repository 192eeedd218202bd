public import TandemCore

/// One entry of a zone's change feed: a record's latest change after some point, or (for a
/// participant) its exit from one of their shares, which they see as a deletion.
public struct ZoneChange: Sendable, Hashable {
    public var recordName: String
    public var recordType: String
    /// The zone change sequence of the change; the feed is ordered by it.
    public var sequence: Int64
    /// A tombstone: deleted, or gone from the viewer's shares.
    public var deleted: Bool

    public init(recordName: String, recordType: String, sequence: Int64, deleted: Bool) {
        self.recordName = recordName
        self.recordType = recordType
        self.sequence = sequence
        self.deleted = deleted
    }
}

/// One entry of a viewer's database feed: a zone that changed, or went away with a reason
/// (decisions D3: `DELETED`, `PURGED`, `ACCESS_LOST`).
public struct DatabaseChange: Sendable, Hashable {
    public var zoneKey: Int64
    public var zoneID: ZoneID
    public var sequence: Int64
    public var deleted: Bool
    public var reason: String?

    public init(zoneKey: Int64, zoneID: ZoneID, sequence: Int64, deleted: Bool, reason: String?) {
        self.zoneKey = zoneKey
        self.zoneID = zoneID
        self.sequence = sequence
        self.deleted = deleted
        self.reason = reason
    }
}

/// Who sees a database feed: a viewer's private or shared database in one container environment.
public struct FeedOwner: Sendable, Hashable {
    public var viewer: String
    public var container: String
    public var environment: Environment
    /// `private` or `shared`.
    public var scope: DatabaseType

    public init(viewer: String, container: String, environment: Environment, scope: DatabaseType) {
        self.viewer = viewer
        self.container = container
        self.environment = environment
        self.scope = scope
    }
}

/// Reads of the change feeds.
public protocol FeedReading {
    /// Changes in `zone` after `sequence`, oldest first, at most `limit`, each live change with
    /// its record and membership read in the same query (nil for tombstones and exits). With
    /// `memberships` (a participant's readable shares), only records of those shares, plus exits
    /// from them of records that are no longer in any of them; nil means every record (owner,
    /// zone-wide share). Without `decodeFields`, records carry their stored field
    /// text only (see `Record.encodedFields`) unless they hold assets.
    func zoneChangePage(zone: StoredZone, after sequence: Int64, limit: Int, memberships: [String]?,
                        decodeFields: Bool) throws -> [(change: ZoneChange, record: Record?, membership: String?)]
    /// The zone's purge horizon: tokens before it are expired (retention, D9).
    func purgedSequence(zone: StoredZone) throws -> Int64
    /// Zones of a viewer's database that changed after `sequence` (the feed clock), oldest first.
    func databaseChanges(_ owner: FeedOwner, after sequence: Int64, limit: Int) throws -> [DatabaseChange]
    /// The feed clock now and its purge horizon.
    func feedClock() throws -> (sequence: Int64, purged: Int64)
    /// The store's generation now, which change tokens issued now carry, and whether `token`
    /// (a token's generation; nil asks nothing) is that one or one this store descends from.
    /// `tandem migrate` starts a new generation on both sides of a copy, so a token one copy
    /// issued after they parted is not read as a position in the other (decisions P78).
    func generation(accepting token: Int64?) throws -> (current: Int64, accepts: Bool)
}

/// Writes of the change feeds.
public protocol FeedWriting: FeedReading {
    /// Every change this transaction logged in any zone's feed so far, in order (a rolled-back
    /// savepoint's are gone): what its after-commit notification must cover.
    func loggedChanges() -> [LoggedChange]
    /// Starts generation `generation` of the store (decisions P78): change tokens issued from
    /// now on carry it. With `forgettingEarlier`, tokens of every earlier generation are
    /// `CHANGE_TOKEN_EXPIRED` from now on (`tandem store new-generation`, after a backup was put
    /// back: the store cannot tell tokens issued before the backup from those issued after it);
    /// without it, they stay valid.
    func startGeneration(_ generation: Int64, at time: Int64, forgettingEarlier: Bool) throws
    /// Ticks the feed clock for one write transaction that changed `zone`, which puts the zone
    /// in the database feed of its owner and of everyone who accepted a share there (one update,
    /// read per viewer at fetch time). With `viewersChanged` (the zone's shares or their
    /// participants changed), viewers who no longer have an accepted share get the zone as
    /// deleted with `ACCESS_LOST`. Returns those viewers (user record names).
    @discardableResult
    func zoneActivity(_ zone: StoredZone, container: String, environment: Environment, viewersChanged: Bool, at time: Int64) throws -> [String]
    /// Records a zone's deletion in every feed that lists it (reason `DELETED`).
    func zoneDeletedFromFeeds(_ zone: StoredZone, at time: Int64) throws
    /// Forgets tombstones, exits and database-feed deletions older than `time`, and moves the
    /// purge horizons past them. Returns how many rows went.
    @discardableResult
    func purgeChanges(olderThan time: Int64) throws -> Int
}
