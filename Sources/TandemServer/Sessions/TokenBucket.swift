import Dispatch

/// A rate limit: `burst` uses at once, refilled at `rate` per second. A participant's messages
/// (decisions G6; mutated under its session's lock) and, one per person, activity invitation
/// lookups (R39, through `TokenBuckets`).
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
        refill()
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Returns a token taken for a use that should not count (never past `burst`).
    mutating func giveBack() {
        tokens = min(burst, tokens + 1)
    }

    /// Seconds until `take()` succeeds again; 0 when it would now.
    mutating func secondsUntilNextToken() -> Double {
        refill()
        return tokens >= 1 ? 0 : (1 - tokens) / rate
    }

    /// Whether the bucket is full again, so it is no different from a new one.
    mutating func isFull() -> Bool {
        refill()
        return tokens >= burst
    }

    private mutating func refill() {
        let now = DispatchTime.now().uptimeNanoseconds
        tokens = min(burst, tokens + Double(now &- last) / 1e9 * rate)
        last = now
    }
}
