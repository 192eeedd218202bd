import TandemCore
import TandemStore

/// The client's answer to a request the store could not serve for now (decisions P2): a
/// `retryable` failure (SQLite busy, a PostgreSQL serialization failure or deadlock) or an
/// `unavailable` database, as `TRY_AGAIN_LATER` (HTTP 503) with the store's `retryAfter` hint.
/// A full store is `DiskFull`'s; a conflict and an internal failure are internal errors.
enum StoreRefusal {
    /// Seconds a client waits when the store gave no hint.
    static let defaultRetryAfterSeconds = 1

    /// The error body for `error`; an unreachable database is logged with the request's uuid.
    static func answer(for error: StoreError, log: RequestLog, uuid: String) -> CloudKitError {
        var refusal: CloudKitError
        switch error.kind {
        case .unavailable:
            log.message("request \(uuid): the database cannot be reached: \(error.reason)")
            refusal = CloudKitError(.tryAgainLater, "the database cannot be reached; retry later")
        default:
            refusal = CloudKitError(.tryAgainLater, "the database is busy; retry shortly")
        }
        refusal.retryAfter = error.retryAfterSeconds ?? defaultRetryAfterSeconds
        return refusal
    }
}
