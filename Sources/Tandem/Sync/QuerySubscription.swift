/// Tells when records of one type that match filters are created, changed or deleted
/// (CloudKit's `CKQuerySubscription`, with `Query.Filter`s in place of an `NSPredicate`).
///
/// ```swift
/// var starred = QuerySubscription(recordType: "Note", filters: [.greaterThanOrEquals("stars", 4)],
///                                 subscriptionID: "starred", options: [.firesOnRecordCreation, .firesOnRecordUpdate])
/// starred.zoneID = trips.zoneID        // nil (the default): every zone
/// try await database.save(starred)
/// ```
///
/// Options need at least one `firesOnRecord…` event; the filters need the fields' QUERYABLE
/// index once the schema has them (`invalidArguments` otherwise). The public database takes only
/// query subscriptions, on its default zone (decisions J12). CloudKit Web Services:
/// subscriptions/modify, `subscriptionType` `query` (decisions F34).
public struct QuerySubscription: SubscriptionConvertible, Hashable {
    /// What fires it (`CKQuerySubscription.Options`).
    public struct Options: OptionSet, Sendable, Hashable {
        public let rawValue: UInt
        public init(rawValue: UInt) { self.rawValue = rawValue }
        public static let firesOnRecordCreation = Options(rawValue: 1 << 0)
        public static let firesOnRecordUpdate = Options(rawValue: 1 << 1)
        public static let firesOnRecordDeletion = Options(rawValue: 1 << 2)
        /// The subscription is deleted after it fires once.
        public static let firesOnce = Options(rawValue: 1 << 3)
    }

    /// The caller's name for it: 1–255 printable ASCII characters, unique per user and database.
    public var subscriptionID: String
    public var recordType: String
    /// ANDed, as in `Query`.
    public var filters: [Query.Filter]
    /// The zone watched; nil: every zone of the database.
    public var zoneID: RecordZone.ID?
    public var querySubscriptionOptions: Options

    public init(recordType: String, filters: [Query.Filter] = [], subscriptionID: String, options: Options) {
        self.recordType = recordType
        self.filters = filters
        self.subscriptionID = subscriptionID
        querySubscriptionOptions = options
    }

    /// The query subscription `subscription` is, or nil for another kind.
    public init?(_ subscription: Subscription) {
        guard case .query(let query, let zoneID, let firesOn, let firesOnce) = subscription.kind else { return nil }
        var options: Options = firesOnce ? .firesOnce : []
        if firesOn.contains(.create) { options.insert(.firesOnRecordCreation) }
        if firesOn.contains(.update) { options.insert(.firesOnRecordUpdate) }
        if firesOn.contains(.delete) { options.insert(.firesOnRecordDeletion) }
        self.init(recordType: query.recordType, filters: query.filters, subscriptionID: subscription.subscriptionID, options: options)
        self.zoneID = zoneID
    }

    public var subscription: Subscription {
        var firesOn: Set<Subscription.Event> = []
        if querySubscriptionOptions.contains(.firesOnRecordCreation) { firesOn.insert(.create) }
        if querySubscriptionOptions.contains(.firesOnRecordUpdate) { firesOn.insert(.update) }
        if querySubscriptionOptions.contains(.firesOnRecordDeletion) { firesOn.insert(.delete) }
        return Subscription(id: subscriptionID, kind: .query(Query(recordType: recordType, filters: filters), zoneID: zoneID,
                                                             firesOn: firesOn, firesOnce: querySubscriptionOptions.contains(.firesOnce)))
    }
}
