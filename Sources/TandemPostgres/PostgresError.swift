/// An error from PostgreSQL, from libpq, or from this layer's use of them, with its SQLSTATE,
/// a ``Kind`` saying what a caller can do about it, and the SQL it concerns.
///
/// Bound arguments and the connection URL are never included: they may hold user data or a
/// password, and errors end up in logs. The message is the server's primary message
/// (`duplicate key value violates unique constraint "zone_name"`) or libpq's.
///
/// ```swift
/// catch let error as PostgresError where error.kind == .conflict { ... }
/// ```
///
/// Source of the codes: PostgreSQL 15 documentation, Appendix A "PostgreSQL Error Codes".
public struct PostgresError: Error, CustomStringConvertible, Sendable {
    /// What a caller can do about an error.
    public enum Kind: String, Sendable, Hashable {
        /// The transaction lost a race (`40001` serialization_failure, `40P01` deadlock_detected):
        /// running it again from the start may succeed.
        case retryable
        /// A unique constraint refused the write (`23505` unique_violation).
        case conflict
        /// The server cannot be reached or is shutting down or starting up (class `08`,
        /// `57P01`–`57P03`, `53300` too_many_connections), the connection broke, or no pooled
        /// connection came free in time: answer SERVICE_UNAVAILABLE and let the client retry.
        case unavailable
        /// The server's disk is full (`53100` disk_full).
        case full
        /// The statement ran past its timeout (`57014` query_canceled).
        case timedOut
        /// A value read from a result did not have the type asked for, or was NULL.
        case typeMismatch
        /// Anything else: a bug in the SQL or the schema, or bad data.
        case other
    }

    /// The five-character SQLSTATE, when the server (or libpq) gave one.
    public var sqlState: String?
    /// What a caller can do about it, derived from ``sqlState`` and the connection's state.
    public var kind: Kind
    /// The server's primary message, or libpq's, or this layer's.
    public var message: String
    /// The SQL being prepared or run, when there was one.
    public var sql: String?
    /// Whether a read-only transaction's first statement (sent with its `BEGIN`, decisions P55)
    /// found the connection dead, before the transaction's body saw any answer: nothing was read
    /// or written, so ``PostgresPool/read(_:_:)`` runs the read once more on another connection
    /// (decisions P68).
    public var isAtReadStart = false
    /// Whether a read begun as one statement without a transaction (decisions P72) went on to a
    /// second statement, which was not sent: ``PostgresPool/readSingleStatement(_:)`` runs the
    /// read again in a read-only transaction.
    public var needsSnapshot = false

    public init(kind: Kind, sqlState: String? = nil, message: String, sql: String? = nil) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.sql = sql
    }

    /// The error for a failed statement with SQLSTATE `sqlState`.
    public init(sqlState: String?, message: String, sql: String? = nil) {
        self.init(kind: Self.kind(of: sqlState), sqlState: sqlState, message: message, sql: sql)
    }

    /// The kind an SQLSTATE belongs to (`nil`: no SQLSTATE, which libpq leaves off when the
    /// connection itself failed, so ``Kind/unavailable``).
    public static func kind(of sqlState: String?) -> Kind {
        guard let sqlState else { return .unavailable }
        switch sqlState {
        case "40001", "40P01": return .retryable
        case "23505": return .conflict
        case "57P01", "57P02", "57P03", "53300": return .unavailable
        case "53100": return .full
        case "57014": return .timedOut
        case _ where sqlState.hasPrefix("08"): return .unavailable
        default: return .other
        }
    }

    public var description: String {
        // No placeholder when libpq gave no SQLSTATE (a connection that failed): "-----" read as a code.
        // A message may quote what a client sent (a tsquery's word): a log line of megabytes (review 50).
        let message = message.count > 1_000 ? message.prefix(1_000) + "…" : message
        var text = "PostgreSQL error \(sqlState.map { $0 + " " } ?? "")(\(kind.rawValue)): \(message)"
        // Migrations run pages of SQL: the start is enough to find the statement.
        if let sql { text += " — while executing `\(sql.count > 300 ? sql.prefix(300) + "…" : sql)`" }
        return text
    }
}

extension PostgresError {
    /// Refusal of a call on a closed connection or pool.
    static func closed(_ what: String) -> PostgresError {
        PostgresError(kind: .unavailable, message: "\(what) is closed")
    }
}
