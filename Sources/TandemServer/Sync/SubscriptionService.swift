import TandemCrypto
import Foundation
public import TandemCore
public import TandemStore

/// subscriptions/list, subscriptions/lookup, subscriptions/modify (CloudKit Web Services), in
/// the private and shared databases, and query subscriptions in the public one (its default
/// zone; the subscription belongs to its creator, decision J12). A zone (or zone-limited query) subscription must name a
/// zone the caller can reach in that database; a subscription only ever fires for changes its
/// owner may see (the hub checks at delivery).
public struct SubscriptionService: Sendable {
    public let store: any Store
    /// Subscriptions per user and database.
    public static let limit = 1000

    public enum Operation: Sendable {
        case create(Subscription)
        case update(Subscription)
        case delete(String)
    }

    public enum Result: Sendable {
        case subscription(Subscription)
        case deleted(String)
        case failed(CloudKitError, subscriptionID: String)
    }

    public func list(scope: RequestScope) throws -> [Subscription] {
        try store.read { reader in
            try reader.subscriptions(owner: scope.user, container: scope.database.container, environment: scope.database.environment,
                                     scope: scope.database.database).map { Self.withoutSecret($0.subscription) }
        }
    }

    public func lookup(_ ids: [String], scope: RequestScope) throws -> [Result] {
        let all = try store.read { reader in
            try reader.subscriptions(owner: scope.user, container: scope.database.container, environment: scope.database.environment,
                                     scope: scope.database.database)
        }
        let byID = Dictionary(all.map { ($0.subscription.subscriptionID, $0.subscription) }, uniquingKeysWith: { a, _ in a })
        return ids.map { id in
            byID[id].map { .subscription(Self.withoutSecret($0)) }
                ?? .failed(CloudKitError(.notFound, "subscription '\(id)' does not exist"), subscriptionID: id)
        }
    }

    /// The webhook secret is shown once, when the subscription is created.
    static func withoutSecret(_ subscription: Subscription) -> Subscription {
        var copy = subscription
        copy.webhookSecret = nil
        return copy
    }

    public func modify(_ operations: [Operation], scope: RequestScope) throws -> [Result] {
        let now = Clock.milliseconds()
        return try store.write { tx in
            var existing = try tx.subscriptions(owner: scope.user, container: scope.database.container,
                                                environment: scope.database.environment, scope: scope.database.database)
            return try operations.map { operation in
                do {
                    return try tx.savepoint { () throws -> Result in
                        switch operation {
                        case .delete(let id):
                            guard try tx.deleteSubscription(owner: scope.user, container: scope.database.container,
                                                            environment: scope.database.environment, scope: scope.database.database, id: id) else {
                                throw CloudKitError(.notFound, "subscription '\(id)' does not exist")
                            }
                            existing.removeAll { $0.subscription.subscriptionID == id }
                            return .deleted(id)
                        case .create(var subscription), .update(var subscription):
                            let current = existing.first { $0.subscription.subscriptionID == subscription.subscriptionID }
                            if case .create = operation, current != nil {
                                throw CloudKitError(.exists, "subscription '\(subscription.subscriptionID)' already exists; use update")
                            }
                            if case .update = operation, current == nil {
                                throw CloudKitError(.notFound, "subscription '\(subscription.subscriptionID)' does not exist")
                            }
                            guard current != nil || existing.count < Self.limit else {
                                throw CloudKitError(.limitExceeded, "at most \(Self.limit) subscriptions per database")
                            }
                            try checkZone(subscription, tx: tx, scope: scope)
                            if subscription.webhookURL != nil {
                                subscription.webhookSecret = current?.subscription.webhookSecret ?? Digest.hex(Digest.randomBytes(32))
                            }
                            let stored = StoredSubscription(key: 0, container: scope.database.container, environment: scope.database.environment,
                                                            scope: scope.database.database, owner: scope.user, subscription: subscription)
                            try tx.putSubscription(stored, at: now)
                            existing.removeAll { $0.subscription.subscriptionID == subscription.subscriptionID }
                            existing.append(stored)
                            // The secret is returned when the webhook is first set up.
                            return .subscription(current?.subscription.webhookSecret == nil ? subscription : Self.withoutSecret(subscription))
                        }
                    }
                } catch let error as CloudKitError {
                    let id: String = switch operation {
                    case .create(let s), .update(let s): s.subscriptionID
                    case .delete(let id): id
                    }
                    return .failed(error, subscriptionID: id)
                }
            }
        }
    }

    /// A named zone must be one the caller reaches in this database.
    private func checkZone(_ subscription: Subscription, tx: any StoreReading, scope: RequestScope) throws {
        guard let zoneID = subscription.zoneID else { return }
        if scope.database.database != .shared && zoneID.isDefaultZone { return }
        guard try RecordService.resolve(tx, scope, zoneID) != nil else {
            throw CloudKitError(.zoneNotFound, "zone '\(zoneID.zoneName)' does not exist", zoneID: zoneID)
        }
    }
}
