/// Tells about every change to the records of one zone (CloudKit's `CKRecordZoneSubscription`).
/// Private and shared databases.
///
/// ```swift
/// try await database.save(RecordZoneSubscription(zoneID: trips.zoneID, subscriptionID: "trips"))
/// ```
///
/// CloudKit Web Services: subscriptions/modify, `subscriptionType` `zone` (decisions F34).
public struct RecordZoneSubscription: SubscriptionConvertible, Hashable {
    /// The caller's name for it: 1–255 printable ASCII characters, unique per user and database.
    public var subscriptionID: String
    /// The zone watched.
    public var zoneID: RecordZone.ID

    public init(zoneID: RecordZone.ID, subscriptionID: String) {
        self.zoneID = zoneID
        self.subscriptionID = subscriptionID
    }

    /// The zone subscription `subscription` is, or nil for another kind.
    public init?(_ subscription: Subscription) {
        guard case .recordZone(let zoneID) = subscription.kind else { return nil }
        self.init(zoneID: zoneID, subscriptionID: subscription.subscriptionID)
    }

    public var subscription: Subscription { Subscription(id: subscriptionID, kind: .recordZone(zoneID)) }
}
