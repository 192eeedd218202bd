internal import CPostgres

/// Fewer round trips (decisions P55, P64): a transaction's `BEGIN` goes out with its first
/// statement in one libpq pipeline; statements whose answer a write does not need go out with
/// the next one that waits (``PostgresConnection/runDeferred(_:_:)``); and a read-only
/// transaction's `COMMIT` goes out without waiting for its answer, which the connection's next
/// use reads before anything else.
///
/// Why a deferred `COMMIT` cannot reach the next user as an open transaction: the server runs
/// what one connection sends in order, so the `COMMIT` ends the transaction before anything the
/// next user sends begins; and every use of the connection (a statement, a transaction, the
/// pool's checks) first reads the `COMMIT`'s answer (`settle`), rolling back should the
/// transaction somehow still be open. A broken connection shows in `PQstatus`, and the pool
/// discards it.
extension PostgresConnection {
    /// Runs `sql` with `arguments` later, with the next statement that waits for its answer (a
    /// query, a `SAVEPOINT` or `RELEASE`, the end of the transaction's body), in one libpq
    /// pipeline with it: no round trip of its own (decisions P64). For writes whose answer the
    /// caller does not need (index rows, log rows): their arguments are checked now (NUL text is
    /// refused here), but a failure on the server is thrown by that later statement, and it
    /// fails the (sub)transaction they belong to as it would have at once. Outside a
    /// transaction the statement runs at once.
    ///
    /// - Throws: ``PostgresError`` for an argument that cannot be sent; outside a transaction,
    ///   as ``run(_:_:)``.
    public func runDeferred(_ sql: String, _ arguments: [PostgresValue] = []) throws(PostgresError) {
        guard isInOpenTransaction else {
            try run(sql, arguments)
            return
        }
        _ = try settled()
        let parameters = try BoundParameters(arguments)
        let statement = try statement(for: sql)
        // Remembered now, so the same SQL deferred twice is prepared once; forgotten again when
        // the pipeline's preparation does not run.
        if !statement.isPrepared { remember(sql, as: statement.name) }
        deferred.append(.prepared(sql: sql, name: statement.name, prepare: !statement.isPrepared, parameters))
        // A bounded pipeline: libpq in blocking mode could otherwise wait on a full socket while
        // the server waits for its answers to be read (a reindex defers two statements a record).
        if deferred.count >= Self.deferredLimit { try flushDeferred() }
    }

    /// Most statements deferred before they are sent without waiting for a later one.
    static let deferredLimit = 32

    /// Sends the deferred statements (and an owed `BEGIN`) now and reads their answers: one
    /// round trip, none when nothing is deferred.
    ///
    /// - Throws: the first deferred statement's error; the statements after it did not run.
    public func flushDeferred() throws(PostgresError) {
        guard !deferred.isEmpty else { return }
        _ = try settled()
        let begin = owedBegin
        owedBegin = nil
        let statements = deferred
        deferred.removeAll()
        _ = try send(begin: begin, statements)
    }

    /// Defers `sql`, one statement without parameters or rows (`SAVEPOINT name`), inside an
    /// open transaction, as `runDeferred` does a statement; outside one it runs at once.
    public func deferCommand(_ sql: String) throws(PostgresError) {
        guard isInOpenTransaction else {
            try execute(sql)
            return
        }
        _ = try settled()
        deferred.append(.command(sql))
        if deferred.count >= Self.deferredLimit { try flushDeferred() }
    }

    /// Drops `marker` (a deferred command) and what was deferred after it, unsent; true when
    /// `marker` was still deferred, false (nothing dropped) when it went out already.
    func discardDeferred(after marker: String) -> Bool {
        guard let index = deferred.lastIndex(where: { if case .command(marker) = $0 { true } else { false } }) else { return false }
        forgetPreparations(Array(deferred[index...]), answers: [])
        deferred.removeSubrange(index...)
        return true
    }

    /// Drops the deferred statements unsent: the work they belong to is being rolled back.
    public func discardDeferred() {
        // A preparation that never went out is not on the server.
        forgetPreparations(deferred, answers: [])
        deferred.removeAll()
    }

    /// Runs `sql`, one statement without parameters or rows (`SAVEPOINT name`, `RELEASE
    /// SAVEPOINT name`), after an owed `BEGIN` and the deferred statements, in their pipeline:
    /// one round trip for all of them (P64).
    ///
    /// - Throws: ``PostgresError``: the first failure among them.
    public func command(_ sql: String) throws(PostgresError) {
        _ = try settled()
        guard owedBegin != nil || !deferred.isEmpty else {
            try execute(sql)
            return
        }
        _ = try pipeline(begin: owedBegin, then: .command(sql))
    }

    /// Sends an owed `BEGIN`, the deferred statements and `last` in one pipeline, and returns
    /// `last`'s result.
    func pipeline(begin: PostgresIsolation?, then last: PipelinedStatement) throws(PostgresError) -> PostgresResult {
        owedBegin = nil
        let statements = deferred + [last]
        deferred.removeAll()
        return try send(begin: begin, statements)
    }

    /// Whether a transaction is open (its `BEGIN` sent or owed).
    private var isInOpenTransaction: Bool { depth > 0 }

    /// Sends `BEGIN` when given, each statement (with its preparation when it is new), then one
    /// sync, and reads every answer: one round trip. The last statement's result, or the first
    /// error among the answers (a failed command skips what follows it up to the sync).
    private func send(begin: PostgresIsolation?, _ statements: [PipelinedStatement]) throws(PostgresError) -> PostgresResult {
        guard let connection = handle else { throw PostgresError.closed("the connection") }
        let items = (begin.map { [PipelinedStatement.command("BEGIN ISOLATION LEVEL \($0.rawValue)")] } ?? []) + statements
        // Extended protocol throughout (a pipeline refuses simple queries).
        var sent = PQenterPipelineMode(connection) == 1
        for item in items {
            switch item {
            case .command(let sql):
                sent = sent && PQsendQueryParams(connection, sql, 0, nil, nil, nil, nil, 0) == 1
            case .prepared(let sql, let name, let prepare, let parameters):
                if prepare { sent = sent && PQsendPrepare(connection, name, sql, 0, nil) == 1 }
                sent = sent && PQsendQueryPrepared(connection, name, parameters.count, parameters.pointers, parameters.lengths,
                                                   parameters.formats, 1) == 1
            }
        }
        sent = sent && PQpipelineSync(connection) == 1 && PQflush(connection) == 0
        guard sent else {
            forgetPreparations(items, answers: [])
            throw brokenPipeline(connection, sql: items.last?.sql ?? "")
        }
        roundTrips += 1
        var answers: [(prepared: Result<PostgresResult, PostgresError>?, result: Result<PostgresResult, PostgresError>)] = []
        for item in items {
            let prepared = item.prepares ? result(of: connection, sql: item.sql) : nil
            answers.append((prepared, result(of: connection, sql: item.sql)))
        }
        // The sync's own answer; then the connection leaves pipeline mode, idle (or in the
        // transaction) again.
        let sync = PQgetResult(connection)
        let synced = sync.map { PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
        if let sync { PQclear(sync) }
        forgetPreparations(items, answers: answers)
        guard synced, PQexitPipelineMode(connection) == 1 else { throw brokenPipeline(connection, sql: items.last?.sql ?? "") }
        var last: PostgresResult?
        for answer in answers {
            if let prepared = answer.prepared { _ = try prepared.get() }
            last = try answer.result.get()
        }
        guard let last else { throw PostgresError(kind: .other, message: "an empty pipeline") }
        return last
    }

    /// Forgets the preparations of `items` that did not succeed (none answered: all of them).
    private func forgetPreparations(_ items: [PipelinedStatement],
                                    answers: [(prepared: Result<PostgresResult, PostgresError>?, result: Result<PostgresResult, PostgresError>)]) {
        for (index, item) in items.enumerated() where item.prepares {
            if index < answers.count, case .success? = answers[index].prepared { continue }
            forget(item.sql)
        }
    }

    /// Sends a read-only transaction's `COMMIT` without waiting for its answer; false (nothing
    /// sent) when the transaction failed, which the synchronous `COMMIT` then reports.
    func sendCommit() throws(PostgresError) -> Bool {
        let connection = try settled()
        guard PQtransactionStatus(connection) == PQTRANS_INTRANS else { return false }
        // In blocking mode (libpq's default) PQsendQuery returns once the message is written.
        guard PQsendQuery(connection, "COMMIT") == 1 else {
            throw PostgresError(kind: .unavailable, message: Self.message(connection), sql: "COMMIT")
        }
        commitInFlight = true
        return true
    }

    /// Reads the answer to a `COMMIT` in flight, waiting for it if needed. Afterwards no
    /// transaction is open: a read-only `COMMIT` fails only with its connection, but should the
    /// transaction be open still it is rolled back here.
    func settle() {
        guard commitInFlight, let connection = handle else { return }
        commitInFlight = false
        if PQconsumeInput(connection) == 1 && PQisBusy(connection) == 1 { roundTrips += 1 }
        while let result = PQgetResult(connection) { PQclear(result) }
        if PQstatus(connection) == CONNECTION_OK && PQtransactionStatus(connection) != PQTRANS_IDLE {
            roundTrips += 1
            if let result = PQexec(connection, "ROLLBACK") { PQclear(result) }
        }
    }

    /// Whether the pool may lend this connection again, without waiting for a `COMMIT` still in
    /// flight: its answer is read now if it has come, else by the next use (the server ends the
    /// transaction before it runs anything else from this connection).
    public var isReusable: Bool {
        if commitInFlight, let connection = handle, PQconsumeInput(connection) == 1, PQisBusy(connection) == 1 {
            return PQstatus(connection) == CONNECTION_OK
        }
        return isHealthy && !isInTransaction
    }

    /// One command's result in the pipeline (the result, then libpq's end-of-command NULL).
    private func result(of connection: OpaquePointer, sql: String) -> Result<PostgresResult, PostgresError> {
        let first = PQgetResult(connection)
        if first != nil {
            while let extra = PQgetResult(connection) { PQclear(extra) }
        }
        if let first, PQresultStatus(first) == PGRES_PIPELINE_ABORTED {
            PQclear(first)
            return .failure(PostgresError(kind: .other, message: "not run: an earlier command of its pipeline failed", sql: sql))
        }
        do throws(PostgresError) {
            return .success(try check(first, sql: sql))
        } catch {
            return .failure(error)
        }
    }

    /// A pipeline that could not be sent or read to its end leaves the connection in an unknown
    /// state: it is closed (the pool replaces it) and the caller told it is unavailable.
    private func brokenPipeline(_ connection: OpaquePointer, sql: String) -> PostgresError {
        let error = PostgresError(kind: .unavailable, message: Self.message(connection), sql: sql)
        close()
        return error
    }
}

/// One statement of a pipeline.
enum PipelinedStatement {
    /// Without parameters or rows, unprepared (`BEGIN …`, `SAVEPOINT …`).
    case command(String)
    /// A prepared statement, with its preparation first when `prepare`.
    case prepared(sql: String, name: String, prepare: Bool, BoundParameters)

    var sql: String {
        switch self {
        case .command(let sql), .prepared(let sql, _, _, _): sql
        }
    }

    var prepares: Bool {
        if case .prepared(_, _, true, _) = self { return true }
        return false
    }
}

/// Arguments encoded for libpq (text or binary, P11) in one buffer that lives as long as this
/// value: a deferred statement's are sent after the call that made them has returned.
final class BoundParameters {
    let count: Int32
    let pointers: [UnsafePointer<CChar>?]
    let lengths: [Int32]
    let formats: [Int32]
    private let buffer: UnsafeMutablePointer<CChar>

    init(_ arguments: [PostgresValue]) throws(PostgresError) {
        var encoded: [(bytes: [UInt8], binary: Bool)?] = []
        encoded.reserveCapacity(arguments.count)
        for argument in arguments { encoded.append(try argument.encoded()) }
        let total = encoded.reduce(0) { $0 + ($1?.bytes.count ?? 0) + 1 }
        let storage = UnsafeMutablePointer<CChar>.allocate(capacity: max(total, 1))
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var offset = 0
        for parameter in encoded {
            guard let parameter else {
                pointers.append(nil); lengths.append(0); formats.append(0)
                continue
            }
            let start = storage + offset
            parameter.bytes.withUnsafeBytes { source in
                if let base = source.baseAddress { UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: source.count) }
            }
            start[parameter.bytes.count] = 0
            offset += parameter.bytes.count + 1
            pointers.append(UnsafePointer(start))
            lengths.append(Int32(parameter.bytes.count))
            formats.append(parameter.binary ? 1 : 0)
        }
        buffer = storage
        count = Int32(arguments.count)
        self.pointers = pointers
        self.lengths = lengths
        self.formats = formats
    }

    deinit { buffer.deallocate() }
}
