/// A value SQLite stores: one of its five storage classes.
///
/// ```swift
/// try connection.run("INSERT INTO zone(name, seq) VALUES (?, ?)", [.text("_defaultZone"), .integer(0)])
/// ```
///
/// Values round-trip exactly, with two SQLite rules worth knowing:
/// - `.real(.nan)` cannot be stored: SQLite silently turns NaN into NULL, so binding it throws
///   ``SQLiteResultCode/mismatch`` instead. Infinities are stored as they are.
/// - A REAL whose value is integral may be stored as an integer when the column has REAL
///   affinity, and comes back as the same `Double`, except that `-0.0` comes back as `0.0`.
///   In a column without a declared type, `-0.0` keeps its sign.
///
/// `.text` may contain NUL characters; they are bound and read with explicit byte lengths.
/// SQL functions such as `length()` still stop at the first NUL. `.blob([])` is an empty blob,
/// distinct from `.null`.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
}
