internal import CSQLite
internal import Foundation

/// One SQLite connection: runs SQL, and prepares each distinct SQL text once.
///
/// ```swift
/// let connection = try SQLiteConnection(path: "/var/lib/tandem/tandem.sqlite")
/// try connection.run("INSERT INTO zone(name) VALUES (?)", [.text("_defaultZone")])
/// let names = try connection.query("SELECT name FROM zone") { $0.text(0) }
/// ```
///
/// The connection is opened with `SQLITE_OPEN_NOMUTEX`: SQLite does no locking of its own, so
/// the connection and its statements must be used by one thread at a time (the type is not
/// `Sendable`). It waits up to ``busyTimeout`` for locks held by other connections or
/// processes, enforces foreign keys, and reports extended result codes.
///
/// Most applications use ``SQLiteDatabase``, which owns its connections.
public final class SQLiteConnection {
    /// How long a statement waits for another connection's lock before failing with `.busy`.
    public static let busyTimeout: Duration = .seconds(5)
    /// Most prepared statements kept per connection.
    public static let statementCacheCapacity = 512
    /// Most bytes the kept statements may hold per connection (SQLite's own measure of each
    /// prepared statement, `SQLITE_STMTSTATUS_MEMUSED`, plus its SQL text): 8 MiB. Counting
    /// statements alone let a few huge generated statements hold gigabytes (issue 14).
    public static let statementCacheBytes = 8 << 20
    /// A statement larger than this is prepared for its one use and never kept: 512 KiB.
    public static let cachedStatementMaxBytes = 512 << 10

    /// The file the connection opened.
    public let path: String
    /// Whether the connection was opened read-only; writes fail with `.readonly`.
    public let isReadOnly: Bool

    private let handle: SQLiteConnectionHandle
    /// Prepared statements by SQL text. The texts come from code, so the set is bounded;
    /// SQL built from data (rather than bound to parameters) would grow it without limit.
    private var statements: [String: SQLiteStatement] = [:]
    /// The cache's bytes by SQL text, and their sum.
    private var statementBytes: [String: Int] = [:]
    private var cachedBytes = 0
    /// Statements of the open transaction run just before its `COMMIT` (``runBeforeCommit(_:_:)``).
    var writesBeforeCommit: [DeferredWrite] = []

    /// Statements in the cache now (for tests and diagnostics).
    public var cachedStatementCount: Int { statements.count }
    /// Bytes the cached statements hold, as counted against ``statementCacheBytes``.
    public var cachedStatementBytes: Int { cachedBytes }

    /// Whether binding `.text` holding U+0000 throws (``SQLiteError/isTextWithNUL``) instead of
    /// storing it. Off by default (SQLite stores such text, and the SDK's local store keeps it);
    /// the server's store turns it on so that it refuses what PostgreSQL `text` cannot hold
    /// (decision P62), and lifts it with ``allowingTextWithNUL(_:)`` where STRING field values
    /// are stored and compared.
    public var refusesTextWithNUL: Bool {
        get { handle.refusesTextWithNUL }
        set { handle.refusesTextWithNUL = newValue }
    }

    /// Runs `body` with ``refusesTextWithNUL`` off, then restores it.
    public func allowingTextWithNUL<T>(_ body: () throws -> T) rethrows -> T {
        let refuses = handle.refusesTextWithNUL
        handle.refusesTextWithNUL = false
        defer { handle.refusesTextWithNUL = refuses }
        return try body()
    }

    /// Opens (for writing, creating the file if needed) or opens read-only.
    ///
    /// - Throws: ``SQLiteError`` with `.cantopen` and the like when the file cannot be opened.
    ///   Some problems (a file that is not a database) only show at the first statement.
    public init(path: String, readOnly: Bool = false) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        flags |= readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        var opened: OpaquePointer?
        let rc = sqlite3_open_v2(path, &opened, flags, nil)
        guard rc == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) }
                ?? String(cString: sqlite3_errstr(rc))
            sqlite3_close(opened)
            throw SQLiteError(code: SQLiteResultCode(rawValue: rc), message: "\(message): \(path)")
        }
        self.path = path
        self.isReadOnly = readOnly
        self.handle = SQLiteConnectionHandle(opened)
        sqlite3_extended_result_codes(opened, 1)
        sqlite3_busy_timeout(opened, Int32(Self.busyTimeout.components.seconds * 1000))
        do {
            try execute("PRAGMA foreign_keys = ON")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Runs one or more `;`-separated statements that take no arguments (schema, pragmas).
    ///
    /// - Throws: ``SQLiteError`` from the first statement that fails; earlier ones stay done
    ///   unless a surrounding transaction is rolled back.
    public func execute(_ sql: String) throws(SQLiteError) {
        let connection = try openHandle()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(connection, sql, nil, nil, &message)
        defer { sqlite3_free(message) }
        guard rc == SQLITE_OK else {
            throw SQLiteError(
                code: SQLiteResultCode(rawValue: rc),
                message: message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(connection)),
                sql: sql)
        }
    }

    /// The prepared statement for `sql`, reset and with all parameters NULL.
    ///
    /// Each SQL text is prepared once per connection and cached: asking again returns the same
    /// object, so the hot path never parses SQL. If that statement is still being stepped (a
    /// query nested inside a query with the same SQL), a fresh uncached statement is returned
    /// instead, so the outer one is not disturbed.
    ///
    /// - Throws: ``SQLiteError`` for SQL that does not prepare, and `.misuse` for SQL holding
    ///   more than one statement.
    public func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        _ = try openHandle()
        if let cached = statements[sql] {
            guard !cached.isBusy else {
                return try SQLiteStatement(connection: handle, sql: sql, persistent: false)
            }
            cached.reset()
            cached.clearBindings()
            return cached
        }
        // Query SQL is generated (filters, sorts), so the cache is bounded by count and bytes: past
        // either cap it starts over, keeping statements that are mid-step.
        let statement = try SQLiteStatement(connection: handle, sql: sql, persistent: true)
        let bytes = statement.memoryUsed + sql.utf8.count
        guard bytes <= Self.cachedStatementMaxBytes else { return statement }
        if statements.count >= Self.statementCacheCapacity || cachedBytes + bytes > Self.statementCacheBytes {
            statements = statements.filter { $0.value.isBusy }
            statementBytes = statementBytes.filter { statements[$0.key] != nil }
            cachedBytes = statementBytes.values.reduce(0, +)
        }
        statements[sql] = statement
        statementBytes[sql] = bytes
        cachedBytes += bytes
        return statement
    }

    /// Runs `sql` with `arguments` bound to its parameters, to completion.
    ///
    /// - Throws: ``SQLiteError``; `.range` when the argument count does not match.
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        while try statement.step() {}
    }

    /// Runs a query and maps every row with `row`.
    ///
    /// ```swift
    /// let zones = try connection.query("SELECT id, name FROM zone WHERE owner = ?", [.integer(owner)]) {
    ///     (id: $0.int64(0), name: $0.text(1))
    /// }
    /// ```
    public func query<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ row: (SQLiteStatement) throws -> T
    ) throws -> [T] {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        var rows: [T] = []
        while try statement.step() {
            rows.append(try row(statement))
        }
        return rows
    }

    /// Runs a query and maps its first row with `row`, or returns `nil` when there is none.
    public func queryOne<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ row: (SQLiteStatement) throws -> T
    ) throws -> T? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return try row(statement)
    }

    /// The rowid of the last row inserted on this connection (0 before any).
    public var lastInsertRowID: Int64 {
        (try? openHandle()).map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE on this connection.
    public var changes: Int {
        (try? openHandle()).map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// Finalizes the cached statements and closes the connection. Idempotent; later calls
    /// throw `.misuse`.
    ///
    /// A statement still referenced elsewhere keeps SQLite's side of the connection alive
    /// until it is released (`sqlite3_close_v2`); stepping it throws `.misuse`.
    public func close() {
        guard handle.isOpen else { return }
        handle.isOpen = false
        statements.removeAll()
        statementBytes.removeAll()
        cachedBytes = 0
        sqlite3_close_v2(handle.pointer)
    }

    // MARK: For the database's own use

    /// Like ``queryOne(_:_:_:)`` for a row mapping that cannot fail, so only SQLite errors
    /// come out.
    func firstRow<T>(
        _ sql: String, _ arguments: [SQLiteValue] = [], _ row: (SQLiteStatement) -> T
    ) throws(SQLiteError) -> T? {
        let statement = try statement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        guard try statement.step() else { return nil }
        return row(statement)
    }

    /// Whether a transaction is open (SQLite may roll one back by itself after I/O errors).
    var isInTransaction: Bool {
        (try? openHandle()).map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    /// Whether foreign key violations wait to be resolved before COMMIT can succeed
    /// (deferred constraints, or `PRAGMA defer_foreign_keys`).
    var hasPendingForeignKeyViolations: Bool {
        guard let connection = try? openHandle() else { return false }
        var current: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(connection, SQLITE_DBSTATUS_DEFERRED_FKS, &current, &highwater, 0)
        return current != 0
    }

    /// Resets every statement left mid-way, so that COMMIT or ROLLBACK is not refused because
    /// of a caller that stopped stepping early.
    func resetActiveStatements() {
        guard let connection = try? openHandle() else { return }
        var next = sqlite3_next_stmt(connection, nil)
        while let statement = next {
            if sqlite3_stmt_busy(statement) != 0 { sqlite3_reset(statement) }
            next = sqlite3_next_stmt(connection, statement)
        }
    }

    /// Runs a transaction-control statement (`BEGIN IMMEDIATE`, `COMMIT`), retrying while it
    /// fails with `.busy` until ``busyTimeout`` has passed.
    ///
    /// SQLite's busy handler already waits inside each attempt; the loop covers the cases
    /// where SQLite reports busy without consulting it (another process recovering the WAL).
    func runRetryingBusy(_ sql: String) throws(SQLiteError) {
        let deadline = ContinuousClock.now + Self.busyTimeout
        while true {
            do {
                try run(sql)
                return
            } catch where error.code.primary == .busy && ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.002)
            }
        }
    }

    private func openHandle() throws(SQLiteError) -> OpaquePointer {
        guard handle.isOpen else { throw SQLiteError.closed("the connection") }
        return handle.pointer
    }
}

/// A connection is confined to one thread at a time; this keeps it from being sent elsewhere.
@available(*, unavailable)
extension SQLiteConnection: Sendable {}
