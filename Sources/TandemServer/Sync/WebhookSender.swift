import Foundation
import Synchronization
import TandemCore
import TandemCrypto
import TandemStore

/// Delivers notifications of subscriptions that name a `webhookURL`: a JSON POST signed with
/// HMAC-SHA256 under the subscription's secret (`X-Tandem-Signature: sha256=<hex>` over the
/// exact body), retried with exponential backoff (0.5, 1, 2, 4 s: five attempts) on network
/// errors and non-2xx answers. It runs on its own thread, after the hub, so a slow or dead
/// endpoint never touches a write; past `capacity` queued deliveries new ones are dropped
/// and counted. Deliveries go through `OutboundClient`: the URL's addresses are checked by
/// the outbound-address rule at every attempt and the connection goes to a checked address;
/// a refused URL is not retried. Redirects are not followed (a 3xx is a failed attempt).
final class WebhookSender: NotificationSink, Sendable {
    static let attempts = 5
    private let capacity: Int
    private let queue = Locked<[(PushNotification, attempt: Int, notBefore: Double)]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    let sent = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    /// Deliveries the outbound-address rule refused.
    let refused = Atomic<Int>(0)
    private let log: RequestLog
    /// Every attempt, for the console (decisions C42).
    let attemptLog = WebhookLog()
    private let client: OutboundClient
    var rule: OutboundRule { client.rule }

    init(log: RequestLog, rule: OutboundRule, capacity: Int = 10_000) {
        self.log = log
        self.capacity = capacity
        client = OutboundClient(rule: rule)
    }

    /// One POST per notification in the cluster: the node that matched it sends it (N4).
    var oncePerCluster: Bool { true }

    func deliver(_ notification: PushNotification) {
        guard notification.webhookURL != nil else { return }
        let accepted = queue.withLock { items -> Bool in
            guard items.count < capacity else { return false }
            items.append((notification, 1, 0))
            return true
        }
        if accepted { wake.signal() } else { dropped.add(1, ordering: .relaxed) }
    }

    func start() {
        let thread = Thread { [self] in
            while !stopped.load(ordering: .acquiring) {
                let now = Date().timeIntervalSince1970
                let due = queue.withLock { items -> (PushNotification, Int)? in
                    guard let index = items.firstIndex(where: { $0.notBefore <= now }) else { return nil }
                    let item = items.remove(at: index)
                    return (item.0, item.attempt)
                }
                guard let (notification, attempt) = due else {
                    let next = queue.withLock { $0.map(\.notBefore).min() }
                    _ = wake.wait(timeout: .now() + min(max((next ?? now + 1) - now, 0.01), 1))
                    continue
                }
                let started = DispatchTime.now().uptimeNanoseconds
                let (outcome, status, failure) = send(notification, attempt: attempt)
                let milliseconds = Int((DispatchTime.now().uptimeNanoseconds - started) / 1_000_000)
                let logged: WebhookLog.Outcome = switch outcome {
                case .delivered: .delivered
                case .refused: .refused
                case .failed: attempt < Self.attempts ? .retrying : .gaveUp
                }
                attemptLog.append(notification, attempt: attempt, status: status, failure: failure, milliseconds: milliseconds, outcome: logged)
                if outcome == .delivered {
                    sent.add(1, ordering: .relaxed)
                } else if outcome == .refused {
                    refused.add(1, ordering: .relaxed)
                } else if attempt < Self.attempts {
                    let delay = 0.5 * pow(2, Double(attempt - 1))
                    queue.withLock { $0.append((notification, attempt + 1, Date().timeIntervalSince1970 + delay)) }
                } else {
                    failed.add(1, ordering: .relaxed)
                    log.message("webhook \(notification.webhookURL ?? "") gave up after \(attempt) attempts (notification \(notification.notificationID))")
                }
            }
        }
        thread.name = "tandem-webhooks"
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .releasing)
        wake.signal()
    }

    /// The signature header value for `body` under `secret`.
    static func signature(_ body: [UInt8], secret: String) -> String {
        "sha256=" + Digest.hex(Digest.hmacSHA256(key: Array(secret.utf8), message: body))
    }

    private enum Outcome { case delivered, failed, refused }

    /// The outcome, the HTTP status answered (nil without an answer) and why there was none.
    private func send(_ notification: PushNotification, attempt: Int) -> (Outcome, Int?, String?) {
        guard let url = notification.webhookURL, let secret = notification.webhookSecret else { return (.refused, nil, "no webhook URL or secret") }
        let body = JSONWriter.bytes(["type": "notification", "notification": notification.json])
        let request = OutboundClient.Request(method: "POST", url: url, headers: [
            ("Content-Type", "application/json"),
            ("X-Tandem-Signature", Self.signature(body, secret: secret)),
            ("X-Tandem-Delivery", notification.notificationID),
            ("X-Tandem-Attempt", String(attempt)),
        ], body: body, maximumResponseBytes: 64 * 1024)
        do {
            let response = try client.perform(request)
            return ((200..<300).contains(response.status) ? .delivered : .failed, response.status, nil)
        } catch .refused(let reason) {
            log.message("webhook for notification \(notification.notificationID) refused: \(reason)")
            return (.refused, nil, reason)
        } catch {
            return (.failed, nil, "\(error)")
        }
    }
}
