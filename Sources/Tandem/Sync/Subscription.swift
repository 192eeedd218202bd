internal import TandemCore

/// A standing request to be told about changes (CloudKit's `CKQuerySubscription`,
/// `CKRecordZoneSubscription` and `CKDatabaseSubscription` in one value).
///
/// ```swift
/// try await database.save(Subscription(subscriptionID: "everything", kind: .database))
/// for try await notification in container.notifications { ... }
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

    public init(subscriptionID: String, kind: Kind) {
        self.subscriptionID = subscriptionID
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
    /// Saves a subscription (`CKDatabase.save(_:)`; subscriptions/modify `create`). Private and
    /// shared databases.
    /// Throws `invalidArguments` (bad query), `limitExceeded` (1,000 per user and database).
    @discardableResult
    public func save(_ subscription: Subscription) async throws(TandemError) -> Subscription {
        let body: JSONObject = ["operations": .array([.object(["operationType": "create", "subscription": subscription.json])])]
        return try await oneSubscription(try await post("subscriptions/modify", body), "subscriptions/modify")
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
