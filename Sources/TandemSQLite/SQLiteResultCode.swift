internal import CSQLite

/// An SQLite result code, primary (`.constraint`) or extended (`.constraintUnique`).
///
/// Connections enable extended result codes, so errors carry the precise code. Match on the
/// family with ``primary``, a `switch`, or a `catch` pattern:
///
/// ```swift
/// do { try connection.run("INSERT INTO record(name) VALUES (?)", [.text(name)]) }
/// catch SQLiteResultCode.constraint { ... }                                   // any constraint
/// catch let error as SQLiteError where error.code == .constraintUnique { ... } // exactly UNIQUE
/// ```
///
/// Source of the values: https://www.sqlite.org/rescode.html
public struct SQLiteResultCode: RawRepresentable, Sendable, Hashable {
    public var rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code: the low 8 bits (`.constraintUnique.primary == .constraint`).
    public var primary: SQLiteResultCode { SQLiteResultCode(rawValue: rawValue & 0xFF) }

    /// Whether this is a primary code rather than an extended one.
    public var isPrimary: Bool { rawValue & ~0xFF == 0 }

    /// Matches `code` against `pattern`: a primary pattern matches its whole family, an
    /// extended pattern only itself.
    public static func ~= (pattern: SQLiteResultCode, code: SQLiteResultCode) -> Bool {
        pattern.isPrimary ? pattern == code.primary : pattern == code
    }

    /// Lets `catch SQLiteResultCode.busy { ... }` match an ``SQLiteError`` by its code.
    public static func ~= (pattern: SQLiteResultCode, error: any Error) -> Bool {
        guard let error = error as? SQLiteError else { return false }
        return pattern ~= error.code
    }

    // Primary codes.
    public static let ok = SQLiteResultCode(rawValue: SQLITE_OK)
    public static let error = SQLiteResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = SQLiteResultCode(rawValue: SQLITE_INTERNAL)
    public static let perm = SQLiteResultCode(rawValue: SQLITE_PERM)
    public static let abort = SQLiteResultCode(rawValue: SQLITE_ABORT)
    public static let busy = SQLiteResultCode(rawValue: SQLITE_BUSY)
    public static let locked = SQLiteResultCode(rawValue: SQLITE_LOCKED)
    public static let nomem = SQLiteResultCode(rawValue: SQLITE_NOMEM)
    public static let readonly = SQLiteResultCode(rawValue: SQLITE_READONLY)
    public static let interrupt = SQLiteResultCode(rawValue: SQLITE_INTERRUPT)
    public static let ioerr = SQLiteResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = SQLiteResultCode(rawValue: SQLITE_CORRUPT)
    public static let notfound = SQLiteResultCode(rawValue: SQLITE_NOTFOUND)
    public static let full = SQLiteResultCode(rawValue: SQLITE_FULL)
    public static let cantopen = SQLiteResultCode(rawValue: SQLITE_CANTOPEN)
    public static let `protocol` = SQLiteResultCode(rawValue: SQLITE_PROTOCOL)
    public static let schema = SQLiteResultCode(rawValue: SQLITE_SCHEMA)
    public static let toobig = SQLiteResultCode(rawValue: SQLITE_TOOBIG)
    public static let constraint = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = SQLiteResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = SQLiteResultCode(rawValue: SQLITE_MISUSE)
    public static let auth = SQLiteResultCode(rawValue: SQLITE_AUTH)
    public static let range = SQLiteResultCode(rawValue: SQLITE_RANGE)
    public static let notadb = SQLiteResultCode(rawValue: SQLITE_NOTADB)
    public static let row = SQLiteResultCode(rawValue: SQLITE_ROW)
    public static let done = SQLiteResultCode(rawValue: SQLITE_DONE)

    // Extended codes the store reacts to.
    public static let busyRecovery = SQLiteResultCode(rawValue: SQLITE_BUSY | (1 << 8))
    public static let busySnapshot = SQLiteResultCode(rawValue: SQLITE_BUSY | (2 << 8))
    public static let constraintCheck = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (1 << 8))
    public static let constraintForeignKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (3 << 8))
    public static let constraintNotNull = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (5 << 8))
    public static let constraintPrimaryKey = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (6 << 8))
    public static let constraintUnique = SQLiteResultCode(rawValue: SQLITE_CONSTRAINT | (8 << 8))
}

extension SQLiteResultCode: CustomStringConvertible {
    /// The number and SQLite's English name for it: `2067 (constraint failed)`.
    public var description: String {
        "\(rawValue) (\(String(cString: sqlite3_errstr(rawValue))))"
    }
}
