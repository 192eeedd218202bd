internal import CPostgres

/// One row of a result, read by column index (0-based) with typed accessors.
///
/// ```swift
/// let zones = try connection.query("SELECT id, name FROM zone WHERE owner = $1", [.integer(owner)]) {
///     (id: try $0.int64(0), name: try $0.string(1))
/// }
/// ```
///
/// Results come in PostgreSQL's binary format (decision P11), decoded by each column's type:
/// `int8`/`int4`/`int2`/`oid` read as `Int64`, `float8`/`float4` as `Double` (every bit, NaN
/// and infinities included), `bool`, `bytea` as bytes, and the text types (`text`, `varchar`,
/// `char(n)`, `name`, `"char"`, `json`, untyped literals) as `String`. Other types (`numeric`,
/// `timestamptz`, `jsonb`, `tsvector`, …) throw ``PostgresError/Kind/typeMismatch``: cast them
/// in the SQL (`SUM(n)::bigint`, `created::text`).
///
/// A row keeps its result alive; it is not `Sendable` (libpq results are not shared across threads here).
public struct PostgresRow {
    private let result: PostgresResult
    private let row: Int32

    init(result: PostgresResult, row: Int) {
        self.result = result
        self.row = Int32(row)
    }

    /// Columns in the row.
    public var count: Int { result.columnCount }

    /// Whether the column is SQL NULL.
    public func isNull(_ column: Int) -> Bool {
        PQgetisnull(result.pointer, row, Int32(column)) != 0
    }

    /// The column as an `Int64`. Throws ``PostgresError/Kind/typeMismatch`` for NULL or a
    /// non-integer column.
    public func int64(_ column: Int) throws(PostgresError) -> Int64 {
        let bytes = try raw(column)
        switch type(column) {
        case PostgresType.int8: return Int64(bigEndian: try fixed(bytes, 8, column).loadUnaligned(as: Int64.self))
        case PostgresType.int4: return Int64(Int32(bigEndian: try fixed(bytes, 4, column).loadUnaligned(as: Int32.self)))
        case PostgresType.int2: return Int64(Int16(bigEndian: try fixed(bytes, 2, column).loadUnaligned(as: Int16.self)))
        case PostgresType.oid: return Int64(UInt32(bigEndian: try fixed(bytes, 4, column).loadUnaligned(as: UInt32.self)))
        default: throw mismatch(column, "an integer")
        }
    }

    /// The column as a `Double` (from `float8` or `float4`).
    public func double(_ column: Int) throws(PostgresError) -> Double {
        let bytes = try raw(column)
        switch type(column) {
        case PostgresType.float8: return Double(bitPattern: UInt64(bigEndian: try fixed(bytes, 8, column).loadUnaligned(as: UInt64.self)))
        case PostgresType.float4: return Double(Float(bitPattern: UInt32(bigEndian: try fixed(bytes, 4, column).loadUnaligned(as: UInt32.self))))
        default: throw mismatch(column, "a double")
        }
    }

    /// The column as a `String` (from a text type; bytes that are not UTF-8 are repaired).
    public func string(_ column: Int) throws(PostgresError) -> String {
        let bytes = try raw(column)
        guard PostgresType.textual.contains(type(column)) else { throw mismatch(column, "text") }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The column's bytes (from `bytea`).
    public func bytes(_ column: Int) throws(PostgresError) -> [UInt8] {
        let bytes = try raw(column)
        guard type(column) == PostgresType.bytea else { throw mismatch(column, "bytea") }
        return Array(bytes)
    }

    /// The column as a `Bool`.
    public func bool(_ column: Int) throws(PostgresError) -> Bool {
        let bytes = try raw(column)
        guard type(column) == PostgresType.bool else { throw mismatch(column, "a bool") }
        return bytes.first != 0
    }

    /// The column as a ``PostgresValue`` (`.null` for NULL), decoded by its type.
    public func value(_ column: Int) throws(PostgresError) -> PostgresValue {
        if isNull(column) { return .null }
        switch type(column) {
        case PostgresType.int8, PostgresType.int4, PostgresType.int2, PostgresType.oid: return .integer(try int64(column))
        case PostgresType.float8, PostgresType.float4: return .double(try double(column))
        case PostgresType.bytea: return .bytes(try bytes(column))
        case PostgresType.bool: return .bool(try bool(column))
        default: return .text(try string(column))
        }
    }

    /// `bytes` when they are exactly `size` long (binary integers and floats are), else a mismatch.
    private func fixed(_ bytes: UnsafeRawBufferPointer, _ size: Int, _ column: Int) throws(PostgresError) -> UnsafeRawBufferPointer {
        guard bytes.count == size else { throw mismatch(column, "\(size) bytes") }
        return bytes
    }

    private func type(_ column: Int) -> Oid { PQftype(result.pointer, Int32(column)) }

    private func raw(_ column: Int) throws(PostgresError) -> UnsafeRawBufferPointer {
        guard column >= 0, column < count else {
            throw PostgresError(kind: .typeMismatch, message: "column \(column) out of range (\(count) columns)")
        }
        guard !isNull(column) else {
            throw PostgresError(kind: .typeMismatch, message: "column \(column) (\(name(column))) is NULL")
        }
        let length = Int(PQgetlength(result.pointer, row, Int32(column)))
        let start = PQgetvalue(result.pointer, row, Int32(column))
        return UnsafeRawBufferPointer(start: start, count: length)
    }

    private func name(_ column: Int) -> String {
        PQfname(result.pointer, Int32(column)).map { String(cString: $0) } ?? "?"
    }

    private func mismatch(_ column: Int, _ wanted: String) -> PostgresError {
        PostgresError(kind: .typeMismatch,
                      message: "column \(column) (\(name(column))) has type oid \(type(column)), not \(wanted); cast it in the SQL")
    }
}

/// The type oids the reads decode (`pg_type.oid`, fixed since PostgreSQL 7).
enum PostgresType {
    static let bool: Oid = 16
    static let bytea: Oid = 17
    static let int8: Oid = 20
    static let int2: Oid = 21
    static let int4: Oid = 23
    static let oid: Oid = 26
    static let float4: Oid = 700
    static let float8: Oid = 701
    /// `"char"`, `name`, `text`, `json`, `unknown`, `bpchar`, `varchar`: binary format is the text.
    static let textual: Set<Oid> = [18, 19, 25, 114, 705, 1042, 1043]
}
