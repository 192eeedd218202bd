import Dispatch
import TandemCore

/// Lets a repeated log line through once per `seconds` per kind (decisions N28, N30): a flood
/// of forged or over-size bus events is counted in `/metrics`, and logged, not once per event.
final class LogInterval: Sendable {
    private let nanoseconds: UInt64
    private let last = Locked<[String: UInt64]>([:])

    init(seconds: UInt64 = 60) { nanoseconds = seconds * 1_000_000_000 }

    /// Whether a line of `kind` may be logged now (and, if so, starts its interval).
    func allows(_ kind: String) -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        return last.withLock { last in
            if let previous = last[kind], now &- previous < nanoseconds { return false }
            last[kind] = now
            return true
        }
    }
}
