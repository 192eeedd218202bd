public import TandemCore

/// A subscription as stored: who owns it, in which database.
public struct StoredSubscription: Sendable, Hashable {
    public var key: Int64
    public var container: String
    public var environment: Environment
    /// `private`, `shared` or `public` (query subscriptions only, decision J12).
    public var scope: DatabaseType
    public var owner: String
    public var subscription: Subscription

    public init(key: Int64, container: String, environment: Environment, scope: DatabaseType, owner: String, subscription: Subscription) {
        self.key = key
        self.container = container
        self.environment = environment
        self.scope = scope
        self.owner = owner
        self.subscription = subscription
    }
}

public protocol SubscriptionReading {
    /// Every subscription of the user in every container, environment and database, oldest
    /// first, at most `limit` (the console's user page).
    func subscriptions(owner: String, limit: Int) throws -> [StoredSubscription]
    /// The user's subscriptions in one database, oldest first.
    func subscriptions(owner: String, container: String, environment: Environment, scope: DatabaseType) throws -> [StoredSubscription]
    /// The subscriptions of everyone who sees `zone`: its owner and its shared-database viewers
    /// (one indexed query, however many participants have none).
    func subscriptions(seeing zone: StoredZone, container: String, environment: Environment) throws -> [StoredSubscription]
    /// Every user's query subscriptions in one container environment's public database, oldest
    /// first (decision J12: any signed-in user may subscribe to queries there, and to nothing else).
    func publicSubscriptions(container: String, environment: Environment) throws -> [StoredSubscription]
}

public protocol SubscriptionWriting: SubscriptionReading {
    /// Inserts or replaces (by owner, database and subscription ID).
    func putSubscription(_ stored: StoredSubscription, at time: Int64) throws
    /// Returns whether one was deleted.
    @discardableResult
    func deleteSubscription(owner: String, container: String, environment: Environment, scope: DatabaseType, id: String) throws -> Bool
}
