internal import CPostgres
internal import Foundation

/// One PostgreSQL connection over libpq: runs SQL with parameters, prepares each distinct SQL
/// text once, and runs transactions (nested ones as savepoints).
///
/// ```swift
/// let connection = try PostgresConnection(url: "postgres://tandem@127.0.0.1:5432/tandem")
/// try connection.run("INSERT INTO zone(name) VALUES ($1)", [.text("_defaultZone")])
/// let names = try connection.query("SELECT name FROM zone") { try $0.string(0) }
/// ```
///
/// Every call blocks its thread until the server answers (libpq's synchronous API): use it
/// from worker threads, never from the libwebsockets service thread. The connection must be
/// used by one thread at a time (the type is not `Sendable`); most callers borrow one from a
/// ``PostgresPool``.
///
/// The URL is read by libpq itself (`PQconnectdbParams` with `expand_dbname`): a
/// `postgres://` or `postgresql://` URI (the scheme in any letter case: ``PostgresURL``) or a `key=value` string, with any of libpq's
/// parameters (`sslmode`, `connect_timeout`, …). Settings the URL leaves out default to TCP
/// keepalives (idle 30 s, interval 10 s, 3 probes), `tcp_user_timeout` 30 s and a
/// `connect_timeout` of 5 s, so a peer that vanishes is noticed in about a minute at worst.
public final class PostgresConnection {
    /// Most prepared statements kept per connection; past it they are all deallocated and the
    /// cache starts over (the SQL texts come from code, so this is only reached by generated SQL).
    public static let statementCacheCapacity = 256

    private var connection: OpaquePointer?
    /// Prepared statements' names by SQL text.
    private var statements: [String: String] = [:]
    private var nextStatement = 0
    /// Open transaction levels: 0 outside, 1 in a transaction, more inside savepoints.
    var depth = 0
    /// A read-only transaction's `BEGIN` not yet sent: it travels with the transaction's first
    /// statement, in one pipeline (decisions P55).
    var owedBegin: PostgresIsolation?
    /// A read-only transaction's `COMMIT` was sent and its answer not yet read: the next use of
    /// the connection reads it first (P55).
    var commitInFlight = false
    /// Set while a read of one statement runs outside a transaction (decisions P72).
    var singleStatementRead: SingleStatementRead?
    /// Statements of the open transaction sent with the next one that waits for its answer
    /// (``runDeferred(_:_:)``, decisions P64).
    var deferred: [PipelinedStatement] = []
    /// Times this connection waited for the server's answer (for tests and diagnostics).
    public internal(set) var roundTrips = 0

    /// Statements in the cache now (for tests and diagnostics).
    public var cachedStatementCount: Int { statements.count }

    /// Connects.
    ///
    /// - Parameters:
    ///   - url: libpq's connection URI or string (the URL's own settings win over the defaults above).
    ///   - statementTimeout: the server cancels a statement running longer (SQLSTATE `57014`,
    ///     ``PostgresError/Kind/timedOut``); nil leaves the server's setting. Milliseconds are kept.
    ///   - idleInTransactionTimeout: the server ends the session of a transaction left idle longer
    ///     (`idle_in_transaction_session_timeout`), so a stalled process cannot hold its locks for
    ///     ever; nil leaves the server's setting.
    /// - Throws: ``PostgresError`` with ``PostgresError/Kind/unavailable`` when the server
    ///   cannot be reached or refuses the connection. The URL is not in the message.
    public init(url: String, statementTimeout: Duration? = .seconds(30), idleInTransactionTimeout: Duration? = nil) throws(PostgresError) {
        // Schemes are case-insensitive (RFC 3986); libpq only knows the lower-case spelling.
        let url = PostgresURL.normalized(url)
        // Defaults first, the URL (`dbname`, expanded) last: later settings win in libpq.
        let settings: [(String, String)] = [
            ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "30"),
            ("keepalives_interval", "10"), ("keepalives_count", "3"), ("tcp_user_timeout", "30000"),
            ("application_name", "tandem"), ("dbname", url),
        ]
        let keys = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer { for pointer in keys + values { free(pointer) } }
        let opened = (keys.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { keyList in
            (values.map { UnsafePointer($0) } + [nil]).withUnsafeBufferPointer { valueList in
                PQconnectdbParams(keyList.baseAddress, valueList.baseAddress, 1)
            }
        }
        guard let opened else { throw PostgresError(kind: .unavailable, message: "libpq could not allocate a connection") }
        guard PQstatus(opened) == CONNECTION_OK else {
            let message = Self.redacting(url, in: Self.trimmed(PQerrorMessage(opened)))
            PQfinish(opened)
            // libpq reports refusals by the server (bad password, no such database) the same way as
            // an unreachable one; either way this node cannot serve until it is fixed or back.
            throw PostgresError(kind: .unavailable, message: message)
        }
        connection = opened
        PQsetNoticeProcessor(opened, ignoreNotice, nil)
        func milliseconds(_ duration: Duration) -> Int64 {
            duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        }
        // One round trip for both.
        let timeouts = [statementTimeout.map { "SET statement_timeout = \(milliseconds($0))" },
                        idleInTransactionTimeout.map { "SET idle_in_transaction_session_timeout = \(milliseconds($0))" }].compactMap { $0 }
        if !timeouts.isEmpty {
            do { try execute(timeouts.joined(separator: "; ")) } catch { close(); throw error }
        }
    }

    deinit { close() }

    /// Whether the connection is usable as far as can be told without a round trip: libpq
    /// considers it open, and the server sent nothing since the last answer. The server speaks
    /// unasked on an idle connection (no `LISTEN` here) only to end it: `57P01` when it shuts down
    /// or an administrator terminates the backend, then end of file, or end of file alone when it
    /// was killed. Used by the pool before lending a connection and when it comes back.
    /// A `COMMIT` still in flight is read first (waiting for it if needed).
    public var isHealthy: Bool {
        settle()
        guard let connection, PQstatus(connection) == CONNECTION_OK else { return false }
        let socket = PQsocket(connection)
        guard socket >= 0 else { return false }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 0)
        return ready == 0
    }

    /// Whether a transaction (or a failed one awaiting ROLLBACK) is open. A `COMMIT` still in
    /// flight is read first (waiting for it if needed).
    public var isInTransaction: Bool {
        if owedBegin != nil { return true }
        settle()
        guard let connection else { return false }
        let status = PQtransactionStatus(connection)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Whether a statement of the open transaction failed and the transaction is waiting for
    /// `ROLLBACK` or `ROLLBACK TO SAVEPOINT`: until then every statement fails with `25P02`.
    public var isInFailedTransaction: Bool {
        guard let connection else { return false }
        return PQtransactionStatus(connection) == PQTRANS_INERROR
    }

    /// Runs one or more `;`-separated statements that take no parameters (schema, `SET`),
    /// unprepared.
    ///
    /// - Throws: ``PostgresError`` from the first statement that fails; outside a transaction
    ///   the whole string runs as one implicit transaction, so none of it stays done.
    public func execute(_ sql: String) throws(PostgresError) {
        let connection = try open()
        roundTrips += 1
        _ = try check(PQexec(connection, sql), sql: sql)
    }

    /// Runs `sql` with `arguments` bound to `$1`, `$2`, …, and returns the rows it touched.
    ///
    /// - Throws: ``PostgresError``; the server's `08P01` when the argument count does not match.
    @discardableResult
    public func run(_ sql: String, _ arguments: [PostgresValue] = []) throws(PostgresError) -> Int {
        try executePrepared(sql, arguments).affectedRows
    }

    /// Runs a query and maps every row with `row`.
    ///
    /// ```swift
    /// let zones = try connection.query("SELECT id, name FROM zone WHERE owner = $1", [.integer(owner)]) {
    ///     (id: try $0.int64(0), name: try $0.string(1))
    /// }
    /// ```
    ///
    /// The whole result is received before the first row is mapped (libpq's default): bound
    /// what a query can return with `LIMIT`.
    public func query<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], _ row: (PostgresRow) throws -> T
    ) throws -> [T] {
        let result = try executePrepared(sql, arguments)
        return try (0..<result.rowCount).map { try row(PostgresRow(result: result, row: $0)) }
    }

    /// Runs a query and maps its first row with `row`, or returns `nil` when there is none.
    public func queryOne<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], _ row: (PostgresRow) throws -> T
    ) throws -> T? {
        let result = try executePrepared(sql, arguments)
        guard result.rowCount > 0 else { return nil }
        return try row(PostgresRow(result: result, row: 0))
    }

    /// Runs `body` in a transaction: COMMIT when it returns, ROLLBACK when it throws (the error
    /// is rethrown). Called inside another transaction, it runs `body` in a savepoint instead
    /// (released when it returns, rolled back to when it throws, leaving the outer transaction
    /// usable), and `isolation` is ignored: the outer transaction's holds.
    ///
    /// A read-only transaction (``PostgresIsolation/repeatableReadOnly``) costs fewer round
    /// trips (decisions P55): its `BEGIN` is sent together with the first statement, in one
    /// pipeline, and its `COMMIT` is sent without waiting for the answer, which the connection's
    /// next use reads before anything else (a read's outcome does not depend on it: nothing was
    /// written, and the snapshot was already read). A body that runs no statement sends neither.
    /// A body that swallowed a failed statement still gets the synchronous `COMMIT` below. A
    /// writing transaction's `COMMIT` waits, and carries the statements the body deferred
    /// (P75): their failure rolls the transaction back and is thrown.
    ///
    /// - Throws: what `body` throws, or ``PostgresError``: ``PostgresError/Kind/retryable``
    ///   when a `.repeatableRead` or `.serializable` transaction lost a race (possibly at
    ///   COMMIT), and ``PostgresError/Kind/other`` when COMMIT found the transaction already
    ///   failed (a statement in `body` failed and `body` swallowed the error) and rolled it back.
    @discardableResult
    public func transaction<T>(
        _ isolation: PostgresIsolation = .readCommitted, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        let level = depth + 1
        if level == 1 {
            // Every transaction's BEGIN travels with its first statement (P55, P64).
            _ = try open()
            owedBegin = isolation
        } else {
            // A nested transaction's SAVEPOINT travels with its first statement that waits, or
            // its RELEASE (P73), as BEGIN does.
            try deferCommand("SAVEPOINT tandem_\(level)")
        }
        depth = level
        let value: T
        do {
            value = try body(self)
            // The body's deferred statements are answered inside its own (sub)transaction, so
            // their failure is the body's and rolls back what it did (P64); a writing
            // transaction's go with its COMMIT, below (P75).
            if level > 1 { try command("RELEASE SAVEPOINT tandem_\(level)") } else if isolation.isReadOnly { try flushDeferred() }
        } catch {
            depth = level - 1
            if level > 1, discardDeferred(after: "SAVEPOINT tandem_\(level)") {
                // Its SAVEPOINT never went out, so nothing of the body did: the enclosing
                // level's deferred statements stay, and there is nothing to roll back.
                throw error
            }
            // Rolled back below with the rest of the body's work.
            discardDeferred()
            if level == 1 {
                // An owed BEGIN was never sent: there is nothing to roll back.
                if owedBegin == nil { try? execute("ROLLBACK") }
                owedBegin = nil
            } else {
                try? execute("ROLLBACK TO SAVEPOINT tandem_\(level); RELEASE SAVEPOINT tandem_\(level)")
            }
            throw error
        }
        depth = level - 1
        if level > 1 { return value }
        if owedBegin != nil && deferred.isEmpty {
            owedBegin = nil
            return value
        }
        if isolation.isReadOnly, try sendCommit() { return value }
        let result: PostgresResult
        if owedBegin != nil || !deferred.isEmpty {
            // The deferred statements, and an owed BEGIN, travel with the COMMIT (P75). A failure
            // among them skips the COMMIT; the transaction is rolled back, as when the body threw.
            do throws(PostgresError) {
                result = try pipeline(begin: owedBegin, then: .command("COMMIT"))
            } catch {
                if error.kind != .unavailable, isInTransaction { try? execute("ROLLBACK") }
                throw error
            }
        } else {
            let connection = try open()
            roundTrips += 1
            result = try check(PQexec(connection, "COMMIT"), sql: "COMMIT")
        }
        // COMMIT of a failed transaction succeeds and answers ROLLBACK.
        guard result.commandTag == "COMMIT" else {
            throw PostgresError(kind: .other, message: "the transaction had failed and was rolled back at COMMIT", sql: "COMMIT")
        }
        return value
    }

    /// Closes the connection. Idempotent; later calls throw ``PostgresError/Kind/unavailable``.
    public func close() {
        guard let connection else { return }
        self.connection = nil
        statements.removeAll()
        owedBegin = nil
        deferred.removeAll()
        commitInFlight = false
        PQfinish(connection)
    }

    // MARK: Statements

    private func executePrepared(_ sql: String, _ arguments: [PostgresValue]) throws(PostgresError) -> PostgresResult {
        let connection = try settled()
        try admitToSingleStatementRead(sql)
        let result = try executePrepared(sql, arguments, on: connection)
        singleStatementAnswered()
        return result
    }

    private func executePrepared(_ sql: String, _ arguments: [PostgresValue], on connection: OpaquePointer) throws(PostgresError) -> PostgresResult {
        let parameters = try BoundParameters(arguments)
        let statement = try statement(for: sql)
        if owedBegin != nil || !deferred.isEmpty {
            // The transaction's BEGIN (P55) and the statements deferred since the last answer
            // (P64), and this statement's preparation when it is new, travel with it.
            let begin = owedBegin
            owedBegin = nil
            if !statement.isPrepared { remember(sql, as: statement.name) }
            do throws(PostgresError) {
                return try pipeline(begin: begin, then: .prepared(sql: sql, name: statement.name, prepare: !statement.isPrepared, parameters))
            } catch {
                var error = error
                error.isAtReadStart = error.kind == .unavailable && begin?.isReadOnly == true
                throw error
            }
        }
        if !statement.isPrepared {
            // nParams 0 and no types: the server infers every parameter's type from the SQL.
            roundTrips += 1
            _ = try check(PQprepare(connection, statement.name, sql, 0, nil), sql: sql)
            statements[sql] = statement.name
        }
        roundTrips += 1
        let result = PQexecPrepared(connection, statement.name, parameters.count, parameters.pointers, parameters.lengths, parameters.formats, 1)
        return try check(result, sql: sql)
    }

    func statement(for sql: String) throws(PostgresError) -> (name: String, isPrepared: Bool) {
        if let name = statements[sql] { return (name, true) }
        if statements.count >= Self.statementCacheCapacity {
            // DEALLOCATE is not transactional, so it is safe inside a transaction too.
            try execute("DEALLOCATE ALL")
            statements.removeAll()
        }
        nextStatement += 1
        return ("tandem_\(nextStatement)", false)
    }

    /// Records that `sql` is now prepared as `name` (the pipeline's preparation succeeded).
    func remember(_ sql: String, as name: String) {
        statements[sql] = name
    }

    /// Forgets `sql`'s prepared statement (its preparation in a pipeline did not run).
    func forget(_ sql: String) {
        statements[sql] = nil
    }

    /// `result` when it is a success, else the error it (or the connection) reports.
    func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> PostgresResult {
        guard let result else {
            throw PostgresError(kind: .unavailable, message: connection.map { Self.trimmed(PQerrorMessage($0)) } ?? "no connection", sql: sql)
        }
        let owned = PostgresResult(result)
        let status = PQresultStatus(result)
        if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY { return owned }
        let sqlState = PQresultErrorField(result, tandem_pg_diag_sqlstate()).map { String(cString: $0) }
        let message = PQresultErrorField(result, tandem_pg_diag_message_primary()).map { String(cString: $0) }
            ?? Self.trimmed(PQresultErrorMessage(result))
        var error = PostgresError(sqlState: sqlState, message: message, sql: sql)
        // A broken connection is unavailable whatever the result says (libpq's own errors have no SQLSTATE).
        if let connection, PQstatus(connection) != CONNECTION_OK { error.kind = .unavailable }
        throw error
    }

    /// The libpq handle, or unavailable once closed (for this module's other files: COPY), ready
    /// for a synchronous command: a `COMMIT` in flight is read and an owed `BEGIN` sent first.
    func open() throws(PostgresError) -> OpaquePointer {
        let connection = try settled()
        // A command or a transaction inside a single-statement read needs a real one (P72).
        if singleStatementRead != nil {
            var error = PostgresError(kind: .other, message: "a read of one statement ran a command")
            error.needsSnapshot = true
            throw error
        }
        // Statements deferred (P64) are sent, with an owed BEGIN, before anything else.
        if !deferred.isEmpty { try flushDeferred() }
        if let begin = owedBegin {
            owedBegin = nil
            roundTrips += 1
            _ = try check(PQexec(connection, "BEGIN ISOLATION LEVEL \(begin.rawValue)"), sql: "BEGIN")
        }
        return connection
    }

    /// The libpq handle with any `COMMIT` in flight read, or unavailable once closed.
    func settled() throws(PostgresError) -> OpaquePointer {
        settle()
        guard let connection else { throw PostgresError.closed("the connection") }
        return connection
    }

    /// The libpq handle as it is (nil once closed), for the pipeline's own file.
    var handle: OpaquePointer? { connection }

    /// libpq quotes a URL it cannot parse (`… in URI: "postgres://u:secret@[bad"`): the URL, and
    /// the password in it, are taken out of the message (P10: errors never carry the URL).
    static func redacting(_ url: String, in message: String) -> String {
        var text = message.replacingOccurrences(of: url, with: "(the connection URL)")
        if let scheme = url.range(of: "://"), let at = url[scheme.upperBound...].lastIndex(of: "@"),
           let colon = url[scheme.upperBound..<at].firstIndex(of: ":") {
            let password = String(url[url.index(after: colon)..<at])
            if !password.isEmpty { text = text.replacingOccurrences(of: password, with: "(password)") }
        }
        return text
    }

    /// libpq's last error message on `connection`.
    static func message(_ connection: OpaquePointer) -> String { trimmed(PQerrorMessage(connection)) }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        message.map { String(cString: $0).trimmingCharacters(in: .whitespacesAndNewlines) } ?? "unknown libpq error"
    }
}

/// Notices (`relation already exists, skipping`) would go to standard error; they are dropped.
private func ignoreNotice(_ argument: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {}

/// A connection is confined to one thread at a time; this keeps it from being sent elsewhere.
@available(*, unavailable)
extension PostgresConnection: Sendable {}
