/// A long-poll push token (CloudKit Web Services tokens/create; decisions N58): whose it is and
/// the container environments it is registered for, and how many notifications wait for it.
public struct StoredPushToken: Sendable, Hashable {
    /// The user record name it belongs to.
    public var user: String
    /// `(container, environment)` pairs, sorted.
    public var scopes: [PushTokenScope]
    /// Notifications waiting in its mailbox.
    public var waiting: Int

    public init(user: String, scopes: [PushTokenScope], waiting: Int) {
        self.user = user
        self.scopes = scopes
        self.waiting = waiting
    }
}

/// One container environment a push token is registered for.
public struct PushTokenScope: Sendable, Hashable, Comparable {
    public var container: String
    /// `development` or `production`, as the notification names it.
    public var environment: String

    public init(container: String, environment: String) {
        self.container = container
        self.environment = environment
    }

    public static func < (a: Self, b: Self) -> Bool { (a.container, a.environment) < (b.container, b.environment) }
}

/// Reads of push tokens and their mailboxes.
public protocol PushTokenReading {
    /// The token, or nil when it was never registered or was dropped (its user's oldest past
    /// the per-user limit).
    func pushToken(_ token: String) throws -> StoredPushToken?
    /// The tokens of `user` registered for a container environment.
    func pushTokens(user: String, container: String, environment: String) throws -> [String]
}

/// Writes of push tokens and their mailboxes: every node reads and writes the same ones, so a
/// long poll may reach any node (N58).
public protocol PushTokenWriting: PushTokenReading {
    /// Registers `token` for `user` in a container environment (adding to those it already has).
    /// A token new to the store drops its user's oldest tokens past `perUser` (with their
    /// mailboxes).
    /// - Returns: false, writing nothing, when another user holds the token, or when it is new
    ///   and the store already holds `maximum` tokens.
    func registerPushToken(_ token: String, user: String, container: String, environment: String, at time: Int64,
                           perUser: Int, maximum: Int) throws -> Bool
    /// Appends `notification` (JSON text) to the mailbox of each of `tokens`, each keeping its
    /// newest `limit` (the oldest dropped first).
    func enqueuePushNotification(_ notification: String, tokens: [String], limit: Int) throws
    /// Takes (deletes and returns) up to `limit` of the oldest notifications waiting for `token`,
    /// oldest first. Two takes never return the same notification.
    func takePushNotifications(token: String, limit: Int) throws -> [String]
}
