import Dispatch

/// A per-participant message rate limit: `burst` messages at once, refilled at `rate` per second
/// (decisions G6). Mutated only under its session's lock.
struct TokenBucket: Sendable {
    var tokens: Double
    var last: UInt64
    let rate: Double
    let burst: Double

    init(rate: Double, burst: Double) {
        self.rate = rate
        self.burst = burst
        tokens = burst
        last = DispatchTime.now().uptimeNanoseconds
    }

    /// Takes one token; false when none is left.
    mutating func take() -> Bool {
        let now = DispatchTime.now().uptimeNanoseconds
        tokens = min(burst, tokens + Double(now &- last) / 1e9 * rate)
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
