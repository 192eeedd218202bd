import TandemCore
import TandemStore

/// What one committed write changed, handed to the hub after commit (DESIGN.md §3).
struct ChangeEvent: Sendable {
    /// One record's change. `memberships` holds the shares it was in before and after (nil =
    /// none), so the hub can tell which participants may hear of it.
    struct RecordChange: Sendable {
        var recordName: String
        var recordType: String
        var event: Subscription.Event
        var memberships: [String?]
        /// A deletion the service described: the deleted record's creator (the public
        /// database's `_creator` grant still decides who hears of it, decision J12).
        var creator: String? = nil
    }

    var container: String
    var environment: Environment
    var zone: StoredZone
    /// The device that made the change (`deviceID` on the request), for muting its own notifications.
    var deviceID: String
    var records: [RecordChange]
    /// The zone itself was created or deleted (database subscriptions only).
    var zoneChanged = false
    /// Participants who lost access to the zone in this write (removed, share deleted): their
    /// shared database lost the zone (`ACCESS_LOST`), so their database subscriptions fire.
    var formerViewers: [String] = []

    /// The change is in the public database (its one zone is owned by `DatabaseScope.publicOwner`,
    /// which no user record name can be).
    var isPublic: Bool { zone.zoneID.ownerRecordName == DatabaseScope.publicOwner }
}

extension ChangeEvent {
    /// The event for what the transaction `tx` logged in `zone`'s change feed: the `described`
    /// records (a service's own account of what it saved or deleted, which tells a creation from
    /// an update and knows the share a record was in before) plus every other change the store
    /// logged in the zone, as an update or a deletion with the shares it was and is in. So
    /// whatever the zone feed shows reaches the subscriptions that cover it: a share deleted by
    /// its owner or left by a participant, a root's `share` link cleared, the records of a
    /// moved subtree, a `DELETE_SELF` cascade (issue 14). `mark`: only changes logged after the
    /// first `mark` count (a write that publishes several events, one per part of its work).
    init(logged tx: any StoreWriting, zone: StoredZone, container: String, environment: Environment, deviceID: String,
         described: [RecordChange] = [], zoneChanged: Bool = false, formerViewers: [String] = [], since mark: Int = 0) {
        var records = described
        var index: [String: Int] = [:]
        for (position, change) in described.enumerated() { index[change.recordName] = position }
        var undescribed = Set<String>()
        for logged in tx.loggedChanges().dropFirst(mark) where logged.zoneKey == zone.key {
            let known = index[logged.recordName]
            if let known, !undescribed.contains(logged.recordName) {
                // A described record keeps its service's account; a later exit only adds a share it was in.
                if let previous = logged.previousMembership, !records[known].memberships.contains(previous) {
                    records[known].memberships.insert(previous, at: 0)
                }
                continue
            }
            var memberships = known.map { records[$0].memberships } ?? []
            if let previous = logged.previousMembership, !memberships.contains(previous) { memberships.append(previous) }
            memberships.removeAll { $0 == logged.membership }
            memberships.append(logged.membership)
            let change = RecordChange(recordName: logged.recordName, recordType: logged.recordType,
                                      event: logged.deleted ? .delete : .update, memberships: memberships)
            if let known {
                records[known] = change
            } else {
                index[logged.recordName] = records.count
                undescribed.insert(logged.recordName)
                records.append(change)
            }
        }
        self.init(container: container, environment: environment, zone: zone, deviceID: deviceID, records: records,
                  zoneChanged: zoneChanged, formerViewers: formerViewers)
    }
}
