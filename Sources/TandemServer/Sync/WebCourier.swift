import Foundation
import Synchronization
import TandemCore
import TandemStore

/// Long-poll delivery for clients that cannot open a WebSocket (CloudKit Web Services:
/// tokens/create answers a `webcourierURL`). Each push token belongs to a user in a container
/// environment and keeps up to `mailboxLimit` undelivered notifications in memory (oldest
/// dropped first); `GET /webcourier/1/{token}` answers at once when some are waiting, or waits
/// up to `timeout` seconds for one. Tokens live in memory: after a restart clients register again.
/// `close()` (at shutdown) ends every parked poll at once and stops new ones from waiting.
final class WebCourier: NotificationSink, Sendable {
    static let prefix = "/webcourier/1/"
    static let mailboxLimit = 100
    /// Long polls waiting at once; more get an immediate (possibly empty) answer, so workers stay free.
    static let maximumWaiters = 16

    private struct Mailbox {
        var user: String
        /// The container environments registered for this token (`container` + "\n" + `environment`):
        /// CloudKit JS keeps one token per APNs environment and registers it for each container it
        /// configures.
        var scopes: Set<String>
        var notifications: [PushNotification] = []
    }

    private static func scope(_ container: String, _ environment: String) -> String { container + "\n" + environment }

    private let mailboxes = Mutex<[String: Mailbox]>([:])
    /// Tokens kept at most, per user and in all (the oldest of a user's go first).
    static let tokensPerUser = 20
    static let maximumTokens = 100_000
    private let arrived = Mutex<[String: [DispatchSemaphore]]>([:])
    private let order = Mutex<[String: [String]]>([:])
    private let waiters = Atomic<Int>(0)
    /// Polls parked now, by a number of their own (the console, decisions C43).
    private let parked = Mutex<(next: UInt64, polls: [UInt64: OpenPoll])>((0, [:]))

    /// A long poll waiting now: whose, for which container environments, since when. Never the token.
    struct OpenPoll: Sendable {
        var user: String
        /// `(container, environment)` pairs the token is registered for.
        var scopes: [(container: String, environment: String)]
        /// Milliseconds since 1970.
        var since: Int64
    }

    /// The long polls parked now in one container environment, oldest first.
    func openPolls(container: String, environment: String) -> [OpenPoll] {
        parked.withLock { $0.polls.values.filter { $0.scopes.contains { $0 == (container, environment) } } }.sorted { $0.since < $1.since }
    }
    private let closed = Atomic<Bool>(false)

    /// Registers `token` for `user` in a container environment (adding it to those the token
    /// already has); returns false when another user already holds it.
    func register(token: String, user: String, container: String, environment: String) -> Bool {
        mailboxes.withLock { boxes in
            if let existing = boxes[token] {
                guard existing.user == user else { return false }
                boxes[token]!.scopes.insert(Self.scope(container, environment))
                return true
            }
            guard boxes.count < Self.maximumTokens else { return false }
            boxes[token] = Mailbox(user: user, scopes: [Self.scope(container, environment)])
            order.withLock { order in
                order[user, default: []].append(token)
                while order[user]!.count > Self.tokensPerUser { boxes[order[user]!.removeFirst()] = nil }
            }
            return true
        }
    }

    func deliver(_ notification: PushNotification) {
        let tokens = mailboxes.withLock { boxes -> [String] in
            var hit: [String] = []
            let scope = Self.scope(notification.container, notification.environment)
            for (token, box) in boxes where box.user == notification.recipient && box.scopes.contains(scope) {
                boxes[token]!.notifications.append(notification)
                if boxes[token]!.notifications.count > Self.mailboxLimit { boxes[token]!.notifications.removeFirst() }
                hit.append(token)
            }
            return hit
        }
        let semaphores = arrived.withLock { waiting in tokens.flatMap { waiting[$0] ?? [] } }
        semaphores.forEach { $0.signal() }
    }

    /// Takes up to `limit` of the waiting notifications of `token` (oldest first; the rest stay
    /// queued for the next poll), waiting up to `timeout` seconds for one. Nil when the token is
    /// unknown. Answers at once, possibly empty, once the courier is closed.
    func poll(token: String, timeout: Double, limit: Int = .max) -> [PushNotification]? {
        func take() -> [PushNotification]? {
            mailboxes.withLock { boxes in
                guard let box = boxes[token] else { return nil }
                let taken = Array(box.notifications.prefix(limit))
                boxes[token]!.notifications.removeFirst(taken.count)
                return taken
            }
        }
        guard let first = take() else { return nil }
        guard first.isEmpty, timeout > 0, !closed.load(ordering: .acquiring) else { return first }
        defer { waiters.subtract(1, ordering: .relaxed) }
        guard waiters.add(1, ordering: .relaxed).newValue <= Self.maximumWaiters else { return first }
        let semaphore = DispatchSemaphore(value: 0)
        arrived.withLock { $0[token, default: []].append(semaphore) }
        defer { arrived.withLock { $0[token]?.removeAll { $0 === semaphore } } }
        // Checked after registering, so a close() racing with this poll cannot be missed.
        if closed.load(ordering: .acquiring) { return take() ?? [] }
        if let ready = take(), !ready.isEmpty { return ready }
        let scopes = mailboxes.withLock { boxes in
            boxes[token].map { box in
                (box.user, box.scopes.sorted().map { scope in
                    let parts = scope.split(separator: "\n", maxSplits: 1).map(String.init)
                    return (container: parts[0], environment: parts.count > 1 ? parts[1] : "")
                })
            }
        }
        let number = parked.withLock { parked -> UInt64 in
            parked.next += 1
            if let scopes { parked.polls[parked.next] = OpenPoll(user: scopes.0, scopes: scopes.1, since: Clock.milliseconds()) }
            return parked.next
        }
        defer { _ = parked.withLock { $0.polls.removeValue(forKey: number) } }
        _ = semaphore.wait(timeout: .now() + timeout)
        return take() ?? []
    }

    /// Ends every parked poll now (each answers what it holds, usually nothing) and makes later
    /// polls answer without waiting: at shutdown the HTTP server waits for in-flight requests,
    /// and a parked poll would otherwise hold it for up to its whole timeout.
    func close() {
        closed.store(true, ordering: .releasing)
        let semaphores = arrived.withLock { $0.values.flatMap { $0 } }
        semaphores.forEach { $0.signal() }
    }
}
