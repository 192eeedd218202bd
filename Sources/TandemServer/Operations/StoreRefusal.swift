import TandemCore
import TandemStore

/// The client's answer to a request the store could not serve for now (decisions P2): a
/// `retryable` failure (SQLite busy, a PostgreSQL serialization failure or deadlock) or an
/// `unavailable` database, as `TRY_AGAIN_LATER` (HTTP 503) with the store's `retryAfter` hint.
/// Text the store does not hold (U+0000 outside STRING field values, P62) is the client's
/// `BAD_REQUEST` (400), on both stores alike.
/// A full store is `DiskFull`'s; a conflict and an internal failure are internal errors.
enum StoreRefusal {
    /// Seconds a client waits when the store gave no hint.
    static let defaultRetryAfterSeconds = 1

    /// Whether ``answer(for:log:uuid:)`` has the client's answer for `error`.
    static func answers(_ error: StoreError) -> Bool {
        switch error.kind {
        case .retryable, .unavailable, .invalidText: true
        case .conflict, .full, .internal: false
        }
    }

    /// The error body for `error`; an unreachable database is logged with the request's uuid.
    static func answer(for error: StoreError, log: RequestLog, uuid: String) -> CloudKitError {
        var refusal: CloudKitError
        switch error.kind {
        case .invalidText:
            return CloudKitError(.badRequest, "text cannot contain U+0000 (NUL) here; only STRING field values may hold it")
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
