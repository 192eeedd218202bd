internal import CSQLite

/// A prepared SQL statement: bind arguments, step through rows, read columns.
///
/// ```swift
/// let statement = try connection.statement("SELECT name, seq FROM zone WHERE owner = ?")
/// try statement.bind([.integer(ownerID)])
/// while try statement.step() {
///     print(statement.text(0), statement.int64(1))
/// }
/// ```
///
/// Parameter indexes are 1-based and column indexes 0-based, as in SQLite. Reading a column
/// as another type converts it the way SQLite does (`int64` of NULL is 0, `text` of an integer
/// is its decimal form). A statement belongs to the connection that prepared it and shares
/// its confinement to one thread at a time; it is finalized when the object goes away.
public final class SQLiteStatement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    let handle: OpaquePointer
    private let connection: SQLiteConnectionHandle

    /// Prepares exactly one statement; SQL after it, other than whitespace and comments, is
    /// refused rather than silently ignored.
    init(connection: SQLiteConnectionHandle, sql: String, persistent: Bool) throws(SQLiteError) {
        let connectionHandle = connection.pointer
        var prepared: OpaquePointer?
        var holdsSecondStatement = false
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(connectionHandle, text, -1, flags, &prepared, &tail)
            if rc == SQLITE_OK, let tail, tail.pointee != 0 {
                // A tail of whitespace and comments prepares to nothing; anything else is a
                // second statement (or a broken one, which is a second statement too).
                var extra: OpaquePointer?
                let tailRC = sqlite3_prepare_v2(connectionHandle, tail, -1, &extra, nil)
                sqlite3_finalize(extra)
                holdsSecondStatement = tailRC != SQLITE_OK || extra != nil
            }
            return rc
        }
        if holdsSecondStatement {
            sqlite3_finalize(prepared)
            throw SQLiteError(
                code: .misuse,
                message: "a statement holds exactly one SQL statement; use execute(_:) for several",
                sql: sql)
        }
        guard rc == SQLITE_OK else {
            throw SQLiteError(
                code: SQLiteResultCode(rawValue: rc),
                message: String(cString: sqlite3_errmsg(connectionHandle)),
                sql: sql)
        }
        guard let prepared else {
            throw SQLiteError(code: .misuse, message: "the SQL holds no statement", sql: sql)
        }
        self.sql = sql
        self.handle = prepared
        self.connection = connection
    }

    deinit { sqlite3_finalize(handle) }

    /// Heap bytes SQLite holds for this prepared statement (`SQLITE_STMTSTATUS_MEMUSED`).
    public var memoryUsed: Int { Int(sqlite3_stmt_status(handle, SQLITE_STMTSTATUS_MEMUSED, 0)) }

    // MARK: Binding

    /// The number of `?` parameters the SQL declares.
    public var parameterCount: Int32 { sqlite3_bind_parameter_count(handle) }

    /// Binds `values` to parameters 1...n in order.
    ///
    /// - Throws: ``SQLiteResultCode/range`` when the count differs from ``parameterCount``;
    ///   ``SQLiteResultCode/mismatch`` for NaN (see ``SQLiteValue``).
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        guard values.count == Int(parameterCount) else {
            throw SQLiteError(
                code: .range,
                message: "\(values.count) arguments for \(parameterCount) parameters",
                sql: sql)
        }
        var index: Int32 = 1
        for value in values {
            try bind(value, at: index)
            index += 1
        }
    }

    /// Binds one value to the parameter at the 1-based `index`.
    ///
    /// - Throws: ``SQLiteResultCode/range`` for an index outside 1...``parameterCount``;
    ///   ``SQLiteResultCode/mismatch`` for NaN, which SQLite would store as NULL, and for text
    ///   holding U+0000 on a connection that refuses it (``SQLiteError/isTextWithNUL``).
    public func bind(_ value: SQLiteValue, at index: Int32) throws(SQLiteError) {
        let rc: Int32
        switch value {
        case .null:
            rc = sqlite3_bind_null(handle, index)
        case .integer(let number):
            rc = sqlite3_bind_int64(handle, index, number)
        case .real(let number):
            guard !number.isNaN else {
                throw SQLiteError(
                    code: .mismatch,
                    message: "NaN cannot be stored: SQLite would turn it into NULL (parameter \(index))",
                    sql: sql)
            }
            rc = sqlite3_bind_double(handle, index, number)
        case .text(var string):
            if connection.refusesTextWithNUL && string.utf8.contains(0) {
                throw SQLiteError.textWithNUL(parameter: index, sql: sql)
            }
            // Explicit byte length: NUL characters inside the string are kept.
            if string.isEmpty {
                // An empty buffer may have no address, which SQLite would bind as NULL.
                rc = sqlite3_bind_text(handle, index, "", 0, tandem_sqlite_transient())
            } else {
                rc = string.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { chars in
                        sqlite3_bind_text64(handle, index, chars.baseAddress, UInt64(chars.count),
                                            tandem_sqlite_transient(), UInt8(SQLITE_UTF8))
                    }
                }
            }
        case .blob(let bytes):
            if bytes.isEmpty {
                // A NULL pointer would bind NULL; a zero-length zeroblob is an empty BLOB.
                rc = sqlite3_bind_zeroblob(handle, index, 0)
            } else {
                rc = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(handle, index, raw.baseAddress, UInt64(raw.count),
                                        tandem_sqlite_transient())
                }
            }
        }
        guard rc == SQLITE_OK else { throw error(rc) }
    }

    /// Sets every parameter back to NULL.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    // MARK: Stepping

    /// Runs the statement to its next row.
    ///
    /// - Returns: `true` when a row is available to read, `false` when the statement is done.
    /// - Throws: ``SQLiteError`` with SQLite's code (for example `.constraintUnique`, `.busy`),
    ///   or `.misuse` once the connection is closed. After an error, the statement must be
    ///   reset before it is run again.
    public func step() throws(SQLiteError) -> Bool {
        guard connection.isOpen else { throw SQLiteError.closed("the statement's connection") }
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let rc: throw error(rc)
        }
    }

    /// Rewinds the statement so it can run again; bindings are kept.
    public func reset() {
        // The code returned repeats the last step's error, which step() already reported.
        sqlite3_reset(handle)
    }

    /// Whether the statement has been stepped but neither finished nor reset.
    var isBusy: Bool { sqlite3_stmt_busy(handle) != 0 }

    // MARK: Columns

    /// The number of columns in each row.
    public var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The name of the 0-based column `index` (its `AS` alias when there is one).
    public func columnName(_ index: Int32) -> String {
        String(cString: sqlite3_column_name(handle, index))
    }

    /// Whether column `index` of the current row is NULL.
    public func isNull(_ index: Int32) -> Bool {
        sqlite3_column_type(handle, index) == SQLITE_NULL
    }

    /// Column `index` of the current row as an integer.
    public func int64(_ index: Int32) -> Int64 {
        sqlite3_column_int64(handle, index)
    }

    /// Column `index` of the current row as a floating-point number.
    public func double(_ index: Int32) -> Double {
        sqlite3_column_double(handle, index)
    }

    /// Column `index` of the current row as text (decoded as UTF-8, NUL characters kept).
    public func text(_ index: Int32) -> String {
        guard let characters = sqlite3_column_text(handle, index) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: characters, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes.
    public func blob(_ index: Int32) -> [UInt8] {
        guard let bytes = sqlite3_column_blob(handle, index) else { return [] }
        let count = Int(sqlite3_column_bytes(handle, index))
        return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// Column `index` of the current row in its own storage class.
    public func value(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(handle, index) {
        case SQLITE_INTEGER: .integer(int64(index))
        case SQLITE_FLOAT: .real(double(index))
        case SQLITE_TEXT: .text(text(index))
        case SQLITE_BLOB: .blob(blob(index))
        default: .null
        }
    }

    // MARK: Errors

    private func error(_ rc: Int32) -> SQLiteError {
        SQLiteError(
            code: SQLiteResultCode(rawValue: rc),
            message: String(cString: sqlite3_errmsg(connection.pointer)),
            sql: sql)
    }
}

/// Statements are confined like their connection; this keeps them from being sent elsewhere.
@available(*, unavailable)
extension SQLiteStatement: Sendable {}
