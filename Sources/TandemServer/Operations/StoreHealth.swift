import Dispatch
import TandemCore
import TandemStore

/// What `/healthz` knows about the store (decisions P60): one
/// empty read transaction (on PostgreSQL a checkout, `BEGIN … READ ONLY` and `COMMIT`; on SQLite
/// no I/O beyond the WAL index), answered within ``timeout``.
///
/// Requests that arrive while a probe is running wait for that probe instead of starting their
/// own, so a load balancer polling a server whose database hangs holds at most one worker
/// thread on the database (the probe's) plus the waiters, each for at most ``timeout``.
final class StoreHealth: Sendable {
    /// Longest a request waits for the probe's answer.
    static let timeout = DispatchTimeInterval.seconds(2)
    /// `retryAfter` of a probe that did not answer in time, in seconds (a store's own hint
    /// otherwise: 5 s for an unreachable PostgreSQL, P22).
    static let slowRetryAfterSeconds = 5

    /// One probe and its outcome: nil while running, then `.some(nil)` when the read worked, or
    /// the error.
    private final class Probe: Sendable {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Locked<(any Error)??>(nil)
    }

    private let store: any Store
    private let running = Locked<Probe?>(nil)

    init(store: any Store) { self.store = store }

    /// Nil when the store answered a read in time; else the error to answer with
    /// (`TRY_AGAIN_LATER`, HTTP 503, with `retryAfter`).
    func check(log: RequestLog, uuid: String) -> CloudKitError? {
        let (probe, starts) = running.withLock { current -> (Probe, Bool) in
            if let current { return (current, false) }
            let fresh = Probe()
            current = fresh
            return (fresh, true)
        }
        if starts {
            DispatchQueue.global().async { [self] in
                let outcome: (any Error)?
                do { try store.read { _ in }; outcome = nil } catch { outcome = error }
                probe.outcome.withLock { $0 = .some(outcome) }
                running.withLock { $0 = nil }
                probe.finished.signal()
            }
        }
        guard probe.finished.wait(timeout: .now() + Self.timeout) == .success else {
            var slow = CloudKitError(.tryAgainLater, "the database did not answer within 2 s; retry later")
            slow.retryAfter = Self.slowRetryAfterSeconds
            return slow
        }
        probe.finished.signal()   // the next waiter of the same probe
        switch probe.outcome.withLock({ $0 }) {
        case .some(nil), nil: return nil
        case .some(let error as StoreError) where error.kind == .retryable || error.kind == .unavailable:
            return StoreRefusal.answer(for: error, log: log, uuid: uuid)
        case .some(let error?):
            log.message("request \(uuid): /healthz: the store failed a read: \(error)")
            var failed = CloudKitError(.tryAgainLater, "the database failed a read; see the server log")
            failed.retryAfter = Self.slowRetryAfterSeconds
            return failed
        }
    }
}
