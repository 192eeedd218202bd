/// Tells about every change in the database: new, changed and deleted zones and records
/// (CloudKit's `CKDatabaseSubscription`; what `SyncEngine` saves). Private and shared databases.
///
/// ```swift
/// try await database.save(DatabaseSubscription(subscriptionID: "everything"))
/// for try await notification in container.notifications { /* fetch databaseChanges(since:) */ }
/// ```
///
/// CloudKit Web Services: subscriptions/modify, `subscriptionType` `database` (decisions F34).
public struct DatabaseSubscription: SubscriptionConvertible, Hashable {
    /// The caller's name for it: 1–255 printable ASCII characters, unique per user and database.
    public var subscriptionID: String

    public init(subscriptionID: String) {
        self.subscriptionID = subscriptionID
    }

    /// The database subscription `subscription` is, or nil for another kind.
    public init?(_ subscription: Subscription) {
        guard case .database = subscription.kind else { return nil }
        self.init(subscriptionID: subscription.subscriptionID)
    }

    public var subscription: Subscription { Subscription(id: subscriptionID, kind: .database) }
}
