internal import TandemCore

/// A subscription of any kind, as the server holds it (CloudKit's `CKSubscription`): what
/// `subscription(for:)` and `allSubscriptions()` return. Create one as a `DatabaseSubscription`,
/// `RecordZoneSubscription` or `QuerySubscription`, and read one back as its kind with their
/// failable `init?(_:)` (CloudKit: `as? CKQuerySubscription`).
///
/// ```swift
/// try await database.save(DatabaseSubscription(subscriptionID: "everything"))
/// for try await notification in container.notifications { ... }
/// let zones = try await database.allSubscriptions().compactMap(RecordZoneSubscription.init)
/// ```
///
/// Notifications say what changed, never the record's contents; fetch the changes with the
/// change feeds. At most 1,000 subscriptions per user and database (decisions S9). CloudKit Web
/// Services: subscriptions/modify, /lookup, /list.
public struct Subscription: Sendable, Hashable {
    /// What a query subscription fires on (`CKQuerySubscription.Options`).
    public enum Event: String, Sendable, Hashable, CaseIterable {
        case create, update, delete
    }

    public enum Kind: Sendable, Hashable {
        /// Records of the query's type matching its filters, in one zone or (nil) every zone.
        case query(Query, zoneID: RecordZone.ID?, firesOn: Set<Event>, firesOnce: Bool)
        /// Any change in one zone.
        case recordZone(RecordZone.ID)
        /// Any change in the database (what CKSyncEngine uses).
        case database
    }

    public var subscriptionID: String
    public var kind: Kind

    @available(*, deprecated, message: "use DatabaseSubscription, RecordZoneSubscription or QuerySubscription (CloudKit's names)")
    public init(subscriptionID: String, kind: Kind) {
        self.init(id: subscriptionID, kind: kind)
    }

    init(id: String, kind: Kind) {
        subscriptionID = id
        self.kind = kind
    }

    var json: JSONValue {
        var wire: TandemCore.Subscription
        switch kind {
        case .query(let query, let zoneID, let firesOn, let firesOnce):
            wire = TandemCore.Subscription(subscriptionID: subscriptionID, kind: .query, zoneID: zoneID?.wire, queryJSON: query.json,
                                           firesOn: Set(firesOn.compactMap { TandemCore.Subscription.Event(rawValue: $0.rawValue) }),
                                           firesOnce: firesOnce, zoneWide: zoneID == nil)
        case .recordZone(let zoneID):
            wire = TandemCore.Subscription(subscriptionID: subscriptionID, kind: .zone, zoneID: zoneID.wire)
        case .database:
            wire = TandemCore.Subscription(subscriptionID: subscriptionID, kind: .database)
        }
        return SubscriptionCodec.encode(wire)
    }

    init(json: JSONValue, scope: Database.Scope) throws(TandemError) {
        let wire: TandemCore.Subscription
        do { wire = try SubscriptionCodec.decode(json, context: "subscription", newID: { "" }) } catch {
            throw TandemError(.internalError, "the server sent a subscription the SDK cannot read: \(error.reason)")
        }
        subscriptionID = wire.subscriptionID
        let zoneID = wire.zoneID.map { RecordZone.ID(wire: $0, scope: scope) }
        switch wire.kind {
        case .query:
            let query = wire.query.map { q in
                Query(recordType: q.recordType, filters: q.filters.map { Query.Filter(wire: $0) }, sort: q.sorts.map { Query.Sort(wire: $0) })
            } ?? Query(recordType: "")
            kind = .query(query, zoneID: zoneID, firesOn: Set(wire.firesOn.compactMap { Event(rawValue: $0.rawValue) }),
                          firesOnce: wire.firesOnce)
        case .zone: kind = .recordZone(zoneID ?? .default)
        case .database: kind = .database
        }
    }
}

extension Database {
    /// Saves a subscription (`CKDatabase.save(_:)`; subscriptions/modify `create`) and returns it
    /// as the server holds it: a `DatabaseSubscription` or `RecordZoneSubscription` (private and
    /// shared databases) or a `QuerySubscription` (any database).
    /// Throws `invalidArguments` (bad query, no `firesOnRecord…` option, a zone or database
    /// subscription in the public database), `serverRecordChanged` (the ID is taken),
    /// `limitExceeded` (1,000 per user and database).
    @discardableResult
    public func save<S: SubscriptionConvertible>(_ subscription: S) async throws(TandemError) -> S {
        let body: JSONObject = ["operations": .array([.object(["operationType": "create", "subscription": subscription.subscription.json])])]
        let saved = try await oneSubscription(try await post("subscriptions/modify", body), "subscriptions/modify")
        guard let typed = S(saved) else { throw TandemError(.internalError, "the server saved \(saved.subscriptionID) as another kind") }
        return typed
    }

    /// Fetches one subscription (`CKDatabase.subscription(for:)`). Throws `unknownItem`.
    public func subscription(for subscriptionID: String) async throws(TandemError) -> Subscription {
        let body: JSONObject = ["subscriptions": .array([.object(["subscriptionID": .string(subscriptionID)])])]
        return try await oneSubscription(try await post("subscriptions/lookup", body), "subscriptions/lookup")
    }

    /// Every subscription of the caller in this database (`CKDatabase.allSubscriptions()`).
    public func allSubscriptions() async throws(TandemError) -> [Subscription] {
        let items = try [JSONValue].items(try await get("subscriptions/list"), "subscriptions", in: "subscriptions/list")
        var subscriptions: [Subscription] = []
        for item in items where itemError(item) == nil { subscriptions.append(try Subscription(json: item, scope: databaseScope)) }
        return subscriptions
    }

    /// Deletes a subscription (`CKDatabase.deleteSubscription(withID:)`). Throws `unknownItem`.
    public func deleteSubscription(withID subscriptionID: String) async throws(TandemError) {
        let body: JSONObject = ["operations": .array([.object(["operationType": "delete",
                                                               "subscription": .object(["subscriptionID": .string(subscriptionID)])])])]
        let items = try [JSONValue].items(try await post("subscriptions/modify", body), "subscriptions", in: "subscriptions/modify")
        if let item = items.first, let error = itemError(item) { throw error }
    }

    private func oneSubscription(_ json: JSONValue, _ operation: String) async throws(TandemError) -> Subscription {
        guard let item = try [JSONValue].items(json, "subscriptions", in: operation).first else {
            throw TandemError(.internalError, "\(operation) answered without a subscription")
        }
        if let error = itemError(item) { throw error }
        return try Subscription(json: item, scope: databaseScope)
    }
}

/// A value `Database.save(_:)` takes as a subscription: `DatabaseSubscription`,
/// `RecordZoneSubscription`, `QuerySubscription` (and the kind-less `Subscription` itself).
public protocol SubscriptionConvertible: Sendable {
    /// The subscription as the wire sees it.
    var subscription: Subscription { get }
    /// This kind's view of `subscription`, or nil when it is another kind.
    init?(_ subscription: Subscription)
}

extension Subscription: SubscriptionConvertible {
    public var subscription: Subscription { self }
    public init?(_ subscription: Subscription) { self = subscription }
}
