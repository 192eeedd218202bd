import Foundation
import TandemCore
import TandemStore

/// Forgets change history older than the retention window (decisions D9: 30 days by default),
/// on a background thread every `interval` seconds. Tokens from before what it removed get
/// `CHANGE_TOKEN_EXPIRED`.
final class ChangePurger: Sendable {
    private let store: any Store
    private let retentionMilliseconds: Int64
    private let interval: Double
    private let stopped = Locked(false)
    /// Whether `start()` ran: `stop()` of a purger never started has no thread to wait for.
    private let started = Locked(false)
    private let wake = DispatchSemaphore(value: 0)
    private let exited = DispatchSemaphore(value: 0)
    private let log: RequestLog

    init(store: any Store, retentionSeconds: Double, interval: Double, log: RequestLog) {
        self.store = store
        retentionMilliseconds = Int64(retentionSeconds * 1000)
        self.interval = interval
        self.log = log
    }

    func start() {
        started.withLock { $0 = true }
        let thread = Thread { [self] in
            while !stopped.withLock({ $0 }) {
                purgeOnce()
                _ = wake.wait(timeout: .now() + interval)
            }
            exited.signal()
        }
        thread.name = "tandem-change-purger"
        thread.start()
    }

    /// Runs one purge now; returns the rows removed (0 after an error, which is logged).
    @discardableResult
    func purgeOnce() -> Int {
        let horizon = Clock.milliseconds() - retentionMilliseconds
        do {
            return try store.write { try $0.purgeChanges(olderThan: horizon) }
        } catch {
            log.message("change purge failed: \(error)")
            return 0
        }
    }

    /// Stops the thread before the store closes.
    func stop() {
        let wasRunning = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard wasRunning, started.withLock({ $0 }) else { return }
        wake.signal()
        exited.wait()
    }
}
