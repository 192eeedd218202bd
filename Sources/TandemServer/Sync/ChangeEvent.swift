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
}
