/// A value bound to a statement's parameter (`$1`, `$2`, …).
///
/// ```swift
/// try connection.run("INSERT INTO zone(name, seq) VALUES ($1, $2)", [.text("_defaultZone"), .integer(0)])
/// ```
///
/// Parameters carry no type of their own: PostgreSQL infers each from where it stands in the
/// SQL, as for an untyped literal (decision P11). Where the SQL gives no hint (`SELECT $1`) it is
/// `text`; cast it there (`SELECT $1::bigint`). `.text`, `.integer`, `.double` and `.bool` travel
/// in PostgreSQL's text format, `.bytes` in binary (so a `bytea` is never hex-encoded):
/// - `.double` keeps every bit: Swift prints the shortest text that reads back as the same
///   value, and NaN and the infinities as `NaN`, `Infinity`, `-Infinity`.
/// - `.text` must not contain NUL: PostgreSQL text cannot hold it, and binding one throws
///   (SQLSTATE `22021`).
/// - `.bytes([])` is an empty `bytea`, distinct from `.null`.
public enum PostgresValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)
    case bytes([UInt8])
    case bool(Bool)
}

extension PostgresValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .text(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension PostgresValue {
    /// The parameter's bytes and whether they are in binary format; nil for NULL.
    func encoded() throws(PostgresError) -> (bytes: [UInt8], binary: Bool)? {
        switch self {
        case .null: return nil
        case .integer(let value): return (Array(String(value).utf8), false)
        case .double(let value):
            let text: String
            if value.isNaN { text = "NaN" }
            else if value.isInfinite { text = value < 0 ? "-Infinity" : "Infinity" }
            else { text = String(value) }   // shortest round-trip form, e.g. "1e-300", "5e-324"
            return (Array(text.utf8), false)
        case .text(let value):
            let bytes = Array(value.utf8)
            guard !bytes.contains(0) else {
                throw PostgresError(kind: .other, sqlState: "22021", message: "text parameters cannot contain NUL (0x00)")
            }
            return (bytes, false)
        case .bytes(let value): return (value, true)
        case .bool(let value): return (Array((value ? "t" : "f").utf8), false)
        }
    }
}
