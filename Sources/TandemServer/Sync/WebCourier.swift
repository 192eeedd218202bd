import Foundation
import Synchronization
import TandemCore
import TandemStore

/// Long-poll delivery for clients that cannot open a WebSocket (CloudKit Web Services:
/// tokens/create answers a `webcourierURL`). Each push token belongs to a user and is registered
/// for container environments; its mailbox keeps up to `mailboxLimit` undelivered notifications
/// (oldest dropped first); `GET /webcourier/1/{token}` answers at once when some are waiting, or
/// waits up to `timeout` seconds for one.
///
/// Tokens and mailboxes are in the store (decisions N58), so a poll may reach any node behind a
/// load balancer that is not sticky: the node that matched a notification (N4) appends it to
/// its recipient's mailboxes (`WebCourierMailboxes`, once per cluster) BEFORE the notification
/// leaves for the other nodes; every node, hearing it, wakes its parked polls of that recipient,
/// which take from the store. A take deletes what it returns, so two polls on two nodes never
/// hand out one notification twice, and nothing between two polls is lost. Tokens survive a
/// restart. `close()` (at shutdown) ends every parked poll at once and stops new ones from waiting.
final class WebCourier: NotificationSink, Sendable {
    static let prefix = "/webcourier/1/"
    static let mailboxLimit = 100
    /// Long polls waiting at once on this node; more get an immediate (possibly empty) answer,
    /// so workers stay free.
    static let maximumWaiters = 16
    /// Tokens kept at most, per user and in all (the oldest of a user's go first).
    static let tokensPerUser = 20
    static let maximumTokens = 100_000

    /// A long poll waiting now: whose, for which container environments, since when. Never the token.
    struct OpenPoll: Sendable {
        var user: String
        /// `(container, environment)` pairs the token is registered for.
        var scopes: [(container: String, environment: String)]
        /// Milliseconds since 1970.
        var since: Int64
    }

    private struct Parked {
        var poll: OpenPoll
        var semaphore: DispatchSemaphore
    }

    private let store: any Store
    private let log: RequestLog?
    /// The sink that fills mailboxes: add it to the change hub before this one.
    let mailboxes: WebCourierMailboxes
    private let waiters = Atomic<Int>(0)
    /// Polls parked now, by a number of their own (the console, decisions C43).
    private let parked = Locked<(next: UInt64, polls: [UInt64: Parked])>((0, [:]))
    private let closed = Atomic<Bool>(false)

    init(store: any Store, log: RequestLog?) {
        self.store = store
        self.log = log
        mailboxes = WebCourierMailboxes(store: store, log: log)
    }

    /// The long polls parked now on this node in one container environment, oldest first.
    func openPolls(container: String, environment: String) -> [OpenPoll] {
        parked.withLock { $0.polls.values.map(\.poll).filter { $0.scopes.contains { $0 == (container, environment) } } }
            .sorted { $0.since < $1.since }
    }

    /// Registers `token` for `user` in a container environment (adding it to those the token
    /// already has); returns false when another user already holds it, or when the server holds
    /// `maximumTokens` already.
    /// - Throws: the store's errors.
    func register(token: String, user: String, container: String, environment: String) throws -> Bool {
        try store.write { try $0.registerPushToken(token, user: user, container: container, environment: environment,
                                                  at: Clock.milliseconds(), perUser: Self.tokensPerUser, maximum: Self.maximumTokens) }
    }

    /// Every node, for every notification it hears: wakes its polls parked for the recipient in
    /// that container environment. The mailbox was filled before (`WebCourierMailboxes`).
    func deliver(_ notification: PushNotification) {
        let semaphores = parked.withLock { parked in
            parked.polls.values.filter { $0.poll.user == notification.recipient
                && $0.poll.scopes.contains { $0 == (notification.container, notification.environment) } }.map(\.semaphore)
        }
        semaphores.forEach { $0.signal() }
    }

    /// Takes up to `limit` of the waiting notifications of `token` (oldest first; the rest stay
    /// queued for the next poll), waiting up to `timeout` seconds for one. Nil when the token is
    /// unknown. Answers at once, possibly empty, once the courier is closed.
    /// - Throws: the store's errors.
    func poll(token: String, timeout: Double, limit: Int = .max) throws -> [PushNotification]? {
        guard let known = try store.read({ try $0.pushToken(token) }) else { return nil }
        if known.waiting > 0 { return try takeWaiting(token, limit) }
        guard timeout > 0, !closed.load(ordering: .acquiring) else { return [] }
        defer { waiters.subtract(1, ordering: .relaxed) }
        guard waiters.add(1, ordering: .relaxed).newValue <= Self.maximumWaiters else { return [] }
        let semaphore = DispatchSemaphore(value: 0)
        let poll = OpenPoll(user: known.user, scopes: known.scopes.map { ($0.container, $0.environment) }, since: Clock.milliseconds())
        let number = parked.withLock { parked -> UInt64 in
            parked.next += 1
            parked.polls[parked.next] = Parked(poll: poll, semaphore: semaphore)
            return parked.next
        }
        defer { _ = parked.withLock { $0.polls.removeValue(forKey: number) } }
        // Taken again once parked: a notification stored between the first look and parking woke nobody.
        let ready = try take(token, limit)
        if !ready.isEmpty || closed.load(ordering: .acquiring) { return ready }
        // Woken, every poll of the recipient answers what it finds, maybe nothing (another poll of
        // the token, on any node, took it first): the client polls again, as after a timeout.
        _ = semaphore.wait(timeout: .now() + timeout)
        return try take(token, limit)
    }

    /// Takes what waits for `token`; writes only when something waits, so idle polls do not
    /// contend with the node filling the mailbox.
    private func take(_ token: String, _ limit: Int) throws -> [PushNotification] {
        guard try store.read({ try $0.pushToken(token)?.waiting ?? 0 }) > 0 else { return [] }
        return try takeWaiting(token, limit)
    }

    private func takeWaiting(_ token: String, _ limit: Int) throws -> [PushNotification] {
        let texts = try Self.retrying { try store.write { try $0.takePushNotifications(token: token, limit: limit) } }
        return texts.compactMap { try? JSONDecoder().decode(PushNotification.self, from: Data($0.utf8)) }
    }

    /// Runs `body` again, up to 5 times in all, while it fails with a retryable store error: on
    /// PostgreSQL (SERIALIZABLE) a take on one node and a fill on another can conflict over one
    /// mailbox, and nothing of the loser remains (`StoreError.Kind.retryable`).
    static func retrying<T>(_ body: () throws -> T) throws -> T {
        var delay = 10
        for _ in 1..<5 {
            do { return try body() } catch let error as StoreError where error.kind == .retryable {
                Thread.sleep(forTimeInterval: Double(delay) / 1000)
                delay *= 2
            }
        }
        return try body()
    }

    /// Ends every parked poll now (each answers what it holds, usually nothing) and makes later
    /// polls answer without waiting: at shutdown the HTTP server waits for in-flight requests,
    /// and a parked poll would otherwise hold it for up to its whole timeout.
    func close() {
        closed.store(true, ordering: .releasing)
        let semaphores = parked.withLock { $0.polls.values.map(\.semaphore) }
        semaphores.forEach { $0.signal() }
    }
}

/// Fills the long-poll mailboxes (decisions N58): on the node that matched a notification only
/// (once per cluster, N4), synchronously as it is published, so the notification is in the store
/// before any other node hears it and wakes its polls. A recipient without tokens costs one read.
struct WebCourierMailboxes: NotificationSink {
    let store: any Store
    let log: RequestLog?

    var oncePerCluster: Bool { true }

    func deliver(_ notification: PushNotification) {
        do {
            let tokens = try store.read { try $0.pushTokens(user: notification.recipient, container: notification.container,
                                                            environment: notification.environment) }
            guard !tokens.isEmpty else { return }
            var stored = notification
            // What only the origin node uses stays out of the store, as out of the bus (N28).
            stored.webhookURL = nil
            stored.webhookSecret = nil
            let text = String(decoding: try JSONEncoder().encode(stored), as: UTF8.self)
            try WebCourier.retrying { try store.write { try $0.enqueuePushNotification(text, tokens: tokens, limit: WebCourier.mailboxLimit) } }
        } catch {
            log?.message("webcourier: a notification could not be put in its mailboxes: \(error)")
        }
    }
}
