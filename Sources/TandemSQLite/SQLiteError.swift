/// An error from SQLite, or from this layer's use of it, with the SQL it concerns.
///
/// Bound arguments are never included: they may hold user data or secrets, and errors end up
/// in logs. The message is SQLite's own (`UNIQUE constraint failed: zone.name`), which names
/// columns, not values.
///
/// ```swift
/// catch let error as SQLiteError where error.code.primary == .constraint { ... }
/// ```
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The result code, extended where SQLite gave one.
    public var code: SQLiteResultCode
    /// SQLite's message, or this layer's when it refused something itself.
    public var message: String
    /// The SQL being prepared or run, when there was one.
    public var sql: String?

    public init(code: SQLiteResultCode, message: String, sql: String? = nil) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    public var description: String {
        var text = "SQLite error \(code): \(message)"
        if let sql { text += " — while executing `\(sql)`" }
        return text
    }
}

extension SQLiteError {
    private static let textWithNULMessage = "text parameters cannot contain NUL (0x00)"

    /// Refusal of text holding U+0000 on a connection that refuses it
    /// (``SQLiteConnection/refusesTextWithNUL``).
    static func textWithNUL(parameter: Int32, sql: String) -> SQLiteError {
        SQLiteError(code: .mismatch, message: "\(textWithNULMessage) (parameter \(parameter))", sql: sql)
    }

    /// Whether this is the refusal of text holding U+0000 (``SQLiteConnection/refusesTextWithNUL``).
    public var isTextWithNUL: Bool { code == .mismatch && message.hasPrefix(Self.textWithNULMessage) }

    /// Refusal of a call on a closed connection or database.
    static func closed(_ what: String) -> SQLiteError {
        SQLiteError(code: .misuse, message: "\(what) is closed")
    }
}
