import TandemCore
import TandemHTTP
import TandemStore

/// subscriptions/list, subscriptions/lookup, subscriptions/modify (CloudKit Web Services), in
/// every database; the public database takes query subscriptions only (decision J12).
enum SubscriptionRoutes {
    /// Every database: the public one for query subscriptions (CloudKit's CKQuerySubscription is
    /// the only kind a public database takes), the private and shared ones for every kind.
    static let databases: Set<DatabaseType> = [.public, .private, .shared]

    static func routes(_ services: Services) -> [DatabaseRoute] {
        [
            DatabaseRoute(operation: "subscriptions/list", method: "GET", databases: databases,
                          summary: "The caller's subscriptions in this database", requestSchema: nil,
                          responseSchema: "SubscriptionsResponse") { context in
                let list = try services.subscriptions.list(scope: context.scope)
                return Responses.json(.object(["subscriptions": .array(list.map(SubscriptionCodec.encode))]))
            },
            DatabaseRoute(operation: "subscriptions/lookup", method: "POST", databases: databases,
                          summary: "Subscriptions by ID", requestSchema: "SubscriptionsLookupRequest",
                          responseSchema: "SubscriptionsResponse") { context in
                let body = try context.jsonBody()
                let items = try RequestContext.items(body, "subscriptions", limit: Limits.operationsPerRequest,
                                                     needed: "subscriptions/lookup needs 'subscriptions', an array of {subscriptionID}")
                let ids = try items.enumerated().map { index, item in
                    guard let id = item["subscriptionID"]?.stringValue else {
                        throw CloudKitError.badRequest("subscriptions[\(index)] needs a 'subscriptionID'")
                    }
                    return id
                }
                return respond(try services.subscriptions.lookup(ids, scope: context.scope), context)
            },
            DatabaseRoute(operation: "subscriptions/modify", method: "POST", databases: databases,
                          summary: "Create, update or delete query, zone and database subscriptions (the public database: query only)",
                          requestSchema: "SubscriptionsModifyRequest", responseSchema: "SubscriptionsResponse") { context in
                let body = try context.jsonBody()
                let items = try RequestContext.items(body, "operations", limit: Limits.operationsPerRequest,
                                                     needed: "subscriptions/modify needs an 'operations' array")
                var operations: [SubscriptionService.Operation] = []
                for (index, item) in items.enumerated() {
                    let label = "operations[\(index)]"
                    guard let type = item["operationType"]?.stringValue else { throw CloudKitError.badRequest("\(label) needs 'operationType'") }
                    guard let json = item["subscription"] else { throw CloudKitError.badRequest("\(label) needs a 'subscription'") }
                    switch type {
                    case "create", "update":
                        let subscription = try SubscriptionCodec.decode(json, context: "\(label).subscription", newID: { UUIDs.make() })
                        if context.database == .public { try checkPublic(subscription, label: label) }
                        if let url = subscription.webhookURL {
                            // Checked again at every delivery (names can move); this answers at once.
                            do { _ = try OutboundTarget.resolve(url, rule: services.webhooks.rule) } catch let error as OutboundError {
                                throw CloudKitError.badRequest("\(label).subscription: webhookURL refused: \(error.description)")
                            }
                        }
                        if type == "update" && json["subscriptionID"]?.stringValue == nil {
                            throw CloudKitError.badRequest("\(label): update needs the subscriptionID")
                        }
                        operations.append(type == "create" ? .create(subscription) : .update(subscription))
                    case "delete":
                        guard let id = json["subscriptionID"]?.stringValue else { throw CloudKitError.badRequest("\(label): delete needs the subscriptionID") }
                        operations.append(.delete(id))
                    default:
                        throw CloudKitError.badRequest("\(label): operationType must be create, update or delete, not '\(type)'")
                    }
                }
                return respond(try services.subscriptions.modify(operations, scope: context.scope), context)
            },
        ]
    }

    /// The public database takes query subscriptions in its default zone only (CloudKit Web
    /// Services, subscriptions/modify; decision J12).
    /// - Throws: `BAD_REQUEST` naming the rule.
    static func checkPublic(_ subscription: Subscription, label: String) throws {
        guard subscription.kind == .query else {
            throw CloudKitError.badRequest("\(label).subscription: the public database takes query subscriptions only, not '\(subscription.kind.rawValue)' (zone and database subscriptions are for the private and shared databases)")
        }
        if let zoneID = subscription.zoneID, !zoneID.isDefaultZone {
            throw CloudKitError.badRequest("\(label).subscription: the public database has only the default zone, not '\(zoneID.zoneName)'")
        }
    }

    static func respond(_ results: [SubscriptionService.Result], _ context: RequestContext) -> HTTPResponse {
        let items: [JSONValue] = results.map { result in
            switch result {
            case .subscription(let subscription):
                return SubscriptionCodec.encode(subscription)
            case .deleted(let id):
                return .object(["subscriptionID": .string(id), "deleted": .bool(true)])
            case .failed(let error, let id):
                var encoded = ErrorCodec.encode(error, uuid: context.uuid).objectValue ?? JSONObject()
                encoded["subscriptionID"] = .string(id)
                return .object(encoded)
            }
        }
        return Responses.json(.object(["subscriptions": .array(items)]))
    }
}
