/// How the SDK retries requests that failed for a passing reason: exponential backoff, bounded.
///
/// Retried: `serviceUnavailable` (`TRY_AGAIN_LATER`), `requestRateLimited` (`THROTTLED`),
/// `zoneBusy`, `networkFailure`, `networkUnavailable`, `serverResponseLost`. The wait before
/// retry *n* (from 0) is `initialDelay × multiplier^n`, capped at `maximumDelay`, or the
/// server's `retryAfterSeconds` when it sent one (also capped). After `maximumAttempts`
/// attempts in all the last error is thrown. CloudKit leaves retrying to the app and names the
/// wait in `CKErrorRetryAfterKey`; the SDK does it for you and still reports the wait.
///
/// A write whose response was lost may have been applied: its retry then fails with
/// `serverRecordChanged` (a create that already exists), which callers handle as any conflict.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in all, the first included; 1 disables retries.
    public var maximumAttempts: Int
    /// Seconds before the first retry.
    public var initialDelay: Double
    public var multiplier: Double
    /// No wait is longer than this, in seconds.
    public var maximumDelay: Double

    public init(maximumAttempts: Int = 4, initialDelay: Double = 0.5, multiplier: Double = 2, maximumDelay: Double = 30) {
        precondition(maximumAttempts >= 1, "maximumAttempts counts the first attempt")
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
    }

    /// No retries.
    public static let none = RetryPolicy(maximumAttempts: 1)

    /// The wait before retry `attempt` (0 for the first retry) after `error`, in seconds.
    public func delay(beforeRetry attempt: Int, after error: TandemError) -> Double {
        if let retryAfter = error.retryAfterSeconds { return min(max(retryAfter, 0), maximumDelay) }
        var delay = initialDelay
        for _ in 0..<attempt { delay *= multiplier }
        return min(delay, maximumDelay)
    }
}
