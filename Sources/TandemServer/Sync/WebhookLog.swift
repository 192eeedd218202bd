import Foundation
import TandemCore

/// Every webhook attempt `WebhookSender` made, for the console (decisions C42): a ring of the
/// last `capacity` attempts in memory (oldest dropped first), lost on restart, like the request
/// log (C6). An entry names the URL's host only: a webhook's path or query may carry a secret.
final class WebhookLog: Sendable {
    /// What came of one attempt.
    enum Outcome: String, Sendable {
        /// A 2xx answer.
        case delivered
        /// Failed; another attempt is scheduled.
        case retrying
        /// Failed on the last attempt (`WebhookSender.attempts`).
        case gaveUp
        /// The outbound-address rule refused the URL; not retried.
        case refused
    }

    struct Entry: Sendable {
        /// Increases by one per attempt since start.
        var sequence: Int
        /// Milliseconds since 1970 when the attempt ended.
        var time: Int64
        var container: String
        var environment: String
        /// The subscription's owner (user record name).
        var owner: String
        /// `PUBLIC`, `PRIVATE` or `SHARED`.
        var databaseScope: String
        var subscriptionID: String
        var notificationID: String
        /// `host` or `host:port` of the webhook URL.
        var host: String
        /// 1 for the first try, up to `WebhookSender.attempts`.
        var attempt: Int
        /// The HTTP status answered; nil when there was no answer.
        var status: Int?
        /// Why there was no answer (connection refused, timeout, the address rule's reason).
        var failure: String?
        var milliseconds: Int
        var outcome: Outcome
    }

    let capacity: Int
    private let state = Locked<(entries: [Entry], sequence: Int)>(([], 0))

    init(capacity: Int = 1000) {
        self.capacity = capacity
    }

    func append(_ notification: PushNotification, attempt: Int, status: Int?, failure: String?, milliseconds: Int, outcome: Outcome) {
        state.withLock { ring in
            ring.sequence += 1
            ring.entries.append(Entry(sequence: ring.sequence, time: Int64(Date().timeIntervalSince1970 * 1000), container: notification.container,
                                      environment: notification.environment, owner: notification.recipient,
                                      databaseScope: notification.databaseScope, subscriptionID: notification.subscriptionID,
                                      notificationID: notification.notificationID, host: Self.host(notification.webhookURL ?? ""),
                                      attempt: attempt, status: status, failure: failure, milliseconds: milliseconds, outcome: outcome))
            if ring.entries.count > capacity { ring.entries.removeFirst(ring.entries.count - capacity) }
        }
    }

    /// The attempts of one container environment, newest first; `owner` and `subscriptionID`
    /// narrow them when given.
    func entries(container: String, environment: String, owner: String? = nil, subscriptionID: String? = nil) -> [Entry] {
        state.withLock { ring in
            ring.entries.reversed().filter { entry in
                entry.container == container && entry.environment == environment && (owner.map { $0 == entry.owner } ?? true)
                    && (subscriptionID.map { $0 == entry.subscriptionID } ?? true)
            }
        }
    }

    /// `host` or `host:port` of `url`; `?` when it has none.
    static func host(_ url: String) -> String {
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else { return "?" }
        return components.port.map { "\(host):\($0)" } ?? host
    }
}
