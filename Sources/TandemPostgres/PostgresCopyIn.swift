internal import CPostgres
internal import Foundation

/// A column's type as `COPY … (FORMAT binary)` sends it: each value must be of this type exactly.
public enum PostgresCopyType: Sendable, Hashable {
    /// `bigint` (int8): ``PostgresValue/integer(_:)``.
    case bigint
    /// `double precision` (float8): ``PostgresValue/double(_:)``.
    case doublePrecision
    /// `text` (any collation): ``PostgresValue/text(_:)``.
    case text
    /// `bytea`: ``PostgresValue/bytes(_:)``.
    case bytea
    /// `boolean`: ``PostgresValue/bool(_:)``.
    case boolean
}

/// Rows going into one `COPY … FROM STDIN (FORMAT binary)`; see ``PostgresConnection/copyIn(table:columns:_:)``.
///
/// Rows are encoded in PostgreSQL's binary copy format (a big-endian field count, then each
/// field's length, -1 for NULL, and its bytes) and sent in chunks of about 1 MiB
/// (`PQputCopyData`), so memory stays flat however many rows go in.
public final class PostgresCopyIn {
    /// About this many bytes are buffered before they are sent.
    public static let chunkBytes = 1 << 20

    private let connection: OpaquePointer
    private let types: [PostgresCopyType]
    private let sql: String
    private var buffer: [UInt8] = []

    init(connection: OpaquePointer, types: [PostgresCopyType], sql: String) {
        self.connection = connection
        self.types = types
        self.sql = sql
        buffer.reserveCapacity(Self.chunkBytes + 64 * 1024)
        // Signature, flags (no OIDs), header extension length.
        buffer += Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + [0, 0, 0, 0] + [0, 0, 0, 0]
    }

    /// Adds one row: one value per column, each `.null` or of its column's type.
    ///
    /// - Throws: ``PostgresError/Kind/typeMismatch`` for a wrong count or type (nothing of the
    ///   row is added); `22021` for text containing NUL; what the server or the connection
    ///   reports when a chunk is sent.
    public func append(_ row: [PostgresValue]) throws(PostgresError) {
        guard row.count == types.count else {
            throw PostgresError(kind: .typeMismatch, message: "a COPY row of \(row.count) values for \(types.count) columns", sql: sql)
        }
        let start = buffer.count
        appendInteger(UInt16(row.count))
        for (value, type) in zip(row, types) {
            switch (value, type) {
            case (.null, _):
                appendInteger(UInt32(bitPattern: -1))
            case (.integer(let n), .bigint):
                appendInteger(UInt32(8)); appendInteger(UInt64(bitPattern: n))
            case (.double(let d), .doublePrecision):
                appendInteger(UInt32(8)); appendInteger(d.bitPattern)
            case (.text(let s), .text):
                let bytes = Array(s.utf8)
                guard !bytes.contains(0) else {
                    buffer.removeSubrange(start...)
                    throw PostgresError(kind: .other, sqlState: "22021", message: "text cannot contain NUL (0x00)", sql: sql)
                }
                appendInteger(UInt32(bytes.count)); buffer += bytes
            case (.bytes(let b), .bytea):
                appendInteger(UInt32(b.count)); buffer += b
            case (.bool(let b), .boolean):
                appendInteger(UInt32(1)); buffer.append(b ? 1 : 0)
            default:
                buffer.removeSubrange(start...)
                throw PostgresError(kind: .typeMismatch, message: "a COPY value \(value) for a \(type) column", sql: sql)
            }
        }
        if buffer.count >= Self.chunkBytes { try flush() }
    }

    /// Sends what is buffered.
    func flush() throws(PostgresError) {
        guard !buffer.isEmpty else { return }
        let sent = buffer.withUnsafeBufferPointer { pointer in
            pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) {
                PQputCopyData(connection, $0, Int32(pointer.count))
            }
        }
        guard sent == 1 else {
            throw PostgresError(kind: .unavailable, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Adds the trailer and sends the rest.
    func finish() throws(PostgresError) {
        appendInteger(UInt16(0xFFFF))
        try flush()
    }

    private func appendInteger<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.bigEndian) { buffer += $0 }
    }
}

extension PostgresConnection {
    /// Loads rows into `table` with one `COPY table (columns) FROM STDIN (FORMAT binary)`:
    /// `body` appends them; the statement ends when it returns.
    ///
    /// ```swift
    /// try connection.copyIn(table: "zone", columns: [("id", .bigint), ("name", .text)]) { copy in
    ///     try copy.append([.integer(1), .text("_defaultZone")])
    /// }
    /// ```
    ///
    /// Constraints, defaults and triggers apply as for `INSERT`; foreign keys are checked when
    /// the statement ends, so a table's rows may refer to each other in any order. Names are
    /// quoted as they are given. Run it inside a transaction to make several tables one unit.
    ///
    /// - Returns: the rows copied (the server's count).
    /// - Throws: what `body` throws (the COPY is cancelled: no row of it stays), or
    ///   ``PostgresError``: the server's error for a row it refuses (the whole COPY fails),
    ///   ``PostgresError/Kind/typeMismatch`` for a value of the wrong type.
    @discardableResult
    public func copyIn(table: String, columns: [(name: String, type: PostgresCopyType)],
                       _ body: (PostgresCopyIn) throws -> Void) throws -> Int {
        let quoted = columns.map { Self.quoted($0.name) }.joined(separator: ", ")
        let sql = "COPY \(Self.quoted(table)) (\(quoted)) FROM STDIN (FORMAT binary)"
        let connection = try open()
        guard let started = PQexec(connection, sql) else {
            throw PostgresError(kind: .unavailable, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        if PQresultStatus(started) != PGRES_COPY_IN {
            _ = try check(started, sql: sql)
            throw PostgresError(kind: .other, message: "the server did not start COPY", sql: sql)
        }
        PQclear(started)
        let copy = PostgresCopyIn(connection: connection, types: columns.map(\.type), sql: sql)
        do {
            try body(copy)
            try copy.finish()
        } catch {
            // Cancel: the server answers the COPY with an error, which is drained and dropped.
            _ = PQputCopyEnd(connection, "cancelled by the client")
            while let result = PQgetResult(connection) { PQclear(result) }
            throw error
        }
        guard PQputCopyEnd(connection, nil) == 1 else {
            throw PostgresError(kind: .unavailable, message: String(cString: PQerrorMessage(connection)), sql: sql)
        }
        var final: PostgresResult?
        var failure: PostgresError?
        while let result = PQgetResult(connection) {
            do { final = try check(result, sql: sql) } catch { if failure == nil { failure = error } }
        }
        if let failure { throw failure }
        guard let final else { throw PostgresError(kind: .unavailable, message: "no answer to COPY", sql: sql) }
        return final.affectedRows
    }

    /// `name` as a quoted SQL identifier (`"user"`, `"a""b"`).
    public static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
