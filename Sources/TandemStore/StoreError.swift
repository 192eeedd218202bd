/// A failure of the store itself, the same for every backend (decisions P2).
///
/// Each backend maps its own errors into this type where they leave it (`Store.read`,
/// `Store.write`, opening the store), so nothing above the store names a database: the router
/// and the disk-full handling decide on ``kind`` alone. Errors a body throws on purpose
/// (`CloudKitError`, ...) pass through unchanged.
///
/// | kind          | SQLite                          | PostgreSQL (SQLSTATE)                  | HTTP answer                          |
/// |---------------|---------------------------------|----------------------------------------|--------------------------------------|
/// | `retryable`   | `SQLITE_BUSY`                   | 40001 serialization, 40P01 deadlock, 55P03 lock not available | 503 `TRY_AGAIN_LATER`, `retryAfter` = ``retryAfterSeconds`` |
/// | `conflict`    | `SQLITE_CONSTRAINT` (unique, primary key, foreign key, check, not null) | class 23 | 500 `INTERNAL_ERROR` (the caller did not expect it) |
/// | `unavailable` | `SQLITE_CANTOPEN`               | class 08 (connection), 57P01–57P03     | 503 `TRY_AGAIN_LATER`, `retryAfter` = ``retryAfterSeconds`` |
/// | `full`        | `SQLITE_FULL` (disk, or `--max-database-mib`) | 53100 disk full, 53200 out of memory | 503 `TRY_AGAIN_LATER`, `retryAfter` 30 (DiskFull) |
/// | `invalidText` | text holding U+0000 bound outside STRING field values (refused before SQLite sees it) | 22021, 22P05 (and the bind layer's own 22021 for NUL) | 400 `BAD_REQUEST` |
/// | `internal`    | everything else (corrupt, I/O, misuse, ...) | everything else              | 500 `INTERNAL_ERROR`, logged         |
///
/// `reason` is the backend's own message (it names tables and columns, never bound values, so
/// it may be logged); clients never see it.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What a caller can do about the failure.
    public enum Kind: String, Sendable {
        /// Another writer held what this one needed (a lock, a serialization failure): the whole
        /// write may succeed if run again. Nothing of it remains.
        case retryable
        /// A uniqueness or reference rule refused the write although the caller did not check
        /// for it first: a bug or a race the caller does not handle. Nothing of it remains.
        case conflict
        /// The database cannot be reached (connection refused or lost, file cannot be opened).
        case unavailable
        /// No space is left (disk, quota, or the configured database cap); reads go on.
        case full
        /// Text the store does not hold (decision P62): U+0000 (NUL) in a string other than a
        /// STRING field value or a query operand, which PostgreSQL `text` cannot hold and the
        /// SQLite store refuses alike; or text PostgreSQL cannot encode. The client's input, so
        /// a `BAD_REQUEST`. Nothing of the write remains.
        case invalidText
        /// Anything else: corruption, I/O errors, misuse. Not retryable as such.
        case `internal`
    }

    public var kind: Kind
    /// The backend's message, for the server log.
    public var reason: String
    /// For `retryable` and `unavailable`: seconds a client should wait before retrying (the
    /// `retryAfter` of the `TRY_AGAIN_LATER` answer); nil otherwise.
    public var retryAfterSeconds: Int?

    public init(_ kind: Kind, _ reason: String, retryAfterSeconds: Int? = nil) {
        self.kind = kind
        self.reason = reason
        self.retryAfterSeconds = retryAfterSeconds
    }

    public var description: String { "store error (\(kind.rawValue)): \(reason)" }
}
