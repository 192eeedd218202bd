import Foundation
import Synchronization
import TandemCore

/// Long-poll delivery for clients that cannot open a WebSocket (CloudKit Web Services:
/// tokens/create answers a `webcourierURL`). Each push token belongs to a user in a container
/// environment and keeps up to `mailboxLimit` undelivered notifications in memory (oldest
/// dropped first); `GET /webcourier/1/{token}` answers at once when some are waiting, or waits
/// up to `timeout` seconds for one. Tokens live in memory: after a restart clients register again.
final class WebCourier: NotificationSink, Sendable {
    static let prefix = "/webcourier/1/"
    static let mailboxLimit = 100
    /// Long polls waiting at once; more get an immediate (possibly empty) answer, so workers stay free.
    static let maximumWaiters = 16

    private struct Mailbox {
        var user: String
        var container: String
        var environment: String
        var notifications: [PushNotification] = []
    }

    private let mailboxes = Mutex<[String: Mailbox]>([:])
    private let arrived = Mutex<[String: DispatchSemaphore]>([:])
    private let waiters = Atomic<Int>(0)

    /// Registers `token` for `user`; returns false when another user already holds it.
    func register(token: String, user: String, container: String, environment: String) -> Bool {
        mailboxes.withLock { boxes in
            if let existing = boxes[token], existing.user != user { return false }
            if boxes[token] == nil { boxes[token] = Mailbox(user: user, container: container, environment: environment) }
            return true
        }
    }

    func deliver(_ notification: PushNotification) {
        let tokens = mailboxes.withLock { boxes -> [String] in
            var hit: [String] = []
            for (token, box) in boxes where box.user == notification.recipient && box.container == notification.container
                && box.environment == notification.environment {
                boxes[token]!.notifications.append(notification)
                if boxes[token]!.notifications.count > Self.mailboxLimit { boxes[token]!.notifications.removeFirst() }
                hit.append(token)
            }
            return hit
        }
        let semaphores = arrived.withLock { waiting in tokens.compactMap { waiting[$0] } }
        semaphores.forEach { $0.signal() }
    }

    /// Takes the waiting notifications of `token`, waiting up to `timeout` seconds for one.
    /// Nil when the token is unknown.
    func poll(token: String, timeout: Double) -> [PushNotification]? {
        func take() -> [PushNotification]? {
            mailboxes.withLock { boxes in
                guard let box = boxes[token] else { return nil }
                boxes[token]!.notifications.removeAll()
                return box.notifications
            }
        }
        guard let first = take() else { return nil }
        guard first.isEmpty, timeout > 0, waiters.add(1, ordering: .relaxed).newValue <= Self.maximumWaiters else {
            if first.isEmpty && timeout > 0 { waiters.subtract(1, ordering: .relaxed) }
            return first
        }
        defer { waiters.subtract(1, ordering: .relaxed) }
        let semaphore = DispatchSemaphore(value: 0)
        arrived.withLock { $0[token] = semaphore }
        defer { arrived.withLock { $0[token] = nil } }
        if let ready = take(), !ready.isEmpty { return ready }
        _ = semaphore.wait(timeout: .now() + timeout)
        return take() ?? []
    }
}
