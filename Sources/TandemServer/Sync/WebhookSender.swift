import TandemCrypto
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import TandemCore
import TandemStore

/// Delivers notifications of subscriptions that name a `webhookURL`: a JSON POST signed with
/// HMAC-SHA256 under the subscription's secret (`X-Tandem-Signature: sha256=<hex>` over the
/// exact body), retried with exponential backoff (0.5, 1, 2, 4 s: five attempts) on network
/// errors and non-2xx answers. It runs on its own thread, after the hub, so a slow or dead
/// endpoint never touches a write; past `capacity` queued deliveries new ones are dropped
/// and counted. Redirects are not followed.
final class WebhookSender: NotificationSink, Sendable {
    static let attempts = 5
    private let capacity: Int
    private let queue = Mutex<[(PushNotification, attempt: Int, notBefore: Double)]>([])
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = Atomic<Bool>(false)
    let sent = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    private let log: RequestLog
    private let session: URLSession

    init(log: RequestLog, capacity: Int = 10_000) {
        self.log = log
        self.capacity = capacity
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 10
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

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
                if send(notification, attempt: attempt) {
                    sent.add(1, ordering: .relaxed)
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

    private func send(_ notification: PushNotification, attempt: Int) -> Bool {
        guard let text = notification.webhookURL, let url = URL(string: text), let secret = notification.webhookSecret else { return false }
        let body = JSONWriter.bytes(["type": "notification", "notification": notification.json])
        var request = URLRequest(url: url)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(Self.signature(body, secret: secret), forHTTPHeaderField: "X-Tandem-Signature")
        request.setValue(notification.notificationID, forHTTPHeaderField: "X-Tandem-Delivery")
        request.setValue(String(attempt), forHTTPHeaderField: "X-Tandem-Attempt")
        let done = DispatchSemaphore(value: 0)
        let status = Mutex<Int>(0)
        session.dataTask(with: request) { _, response, _ in
            status.withLock { $0 = (response as? HTTPURLResponse)?.statusCode ?? 0 }
            done.signal()
        }.resume()
        done.wait()
        return (200..<300).contains(status.withLock { $0 })
    }
}

/// Webhook deliveries never follow redirects (a redirect is a failed attempt).
private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }
}
