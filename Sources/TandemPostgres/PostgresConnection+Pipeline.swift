internal import CPostgres

/// Fewer round trips for read-only transactions (decisions P55): the `BEGIN` goes out with the
/// first statement in one libpq pipeline, and the `COMMIT` goes out without waiting for its
/// answer, which the connection's next use reads before anything else.
///
/// Why a deferred `COMMIT` cannot reach the next user as an open transaction: the server runs
/// what one connection sends in order, so the `COMMIT` ends the transaction before anything the
/// next user sends begins; and every use of the connection (a statement, a transaction, the
/// pool's checks) first reads the `COMMIT`'s answer (`settle`), rolling back should the
/// transaction somehow still be open. A broken connection shows in `PQstatus`, and the pool
/// discards it.
extension PostgresConnection {
    /// Sends `BEGIN`, the statement's preparation when it is new, and the statement, then one
    /// sync, and reads their answers: one round trip. The statement's result, or the first
    /// error among the answers (a failed `BEGIN` or preparation skips what follows it).
    func pipelined(begin: PostgresIsolation, statement: (name: String, isPrepared: Bool), sql: String, _ count: Int32,
                   _ values: [UnsafePointer<CChar>?], _ lengths: [Int32], _ formats: [Int32]) throws(PostgresError) -> PostgresResult {
        guard let connection = handle else { throw PostgresError.closed("the connection") }
        let beginSQL = "BEGIN ISOLATION LEVEL \(begin.rawValue)"
        var sent = PQenterPipelineMode(connection) == 1
        // Extended protocol throughout (a pipeline refuses simple queries); no parameters for BEGIN.
        sent = sent && PQsendQueryParams(connection, beginSQL, 0, nil, nil, nil, nil, 0) == 1
        if !statement.isPrepared {
            sent = sent && PQsendPrepare(connection, statement.name, sql, 0, nil) == 1
        }
        sent = sent && PQsendQueryPrepared(connection, statement.name, count, values, lengths, formats, 1) == 1
        sent = sent && PQpipelineSync(connection) == 1 && PQflush(connection) == 0
        guard sent else { throw brokenPipeline(connection, sql: sql) }
        roundTrips += 1
        let beginResult = result(of: connection, sql: beginSQL)
        let prepareResult = statement.isPrepared ? nil : result(of: connection, sql: sql)
        let statementResult = result(of: connection, sql: sql)
        // The sync's own answer; then the connection leaves pipeline mode, idle (or in the
        // transaction) again.
        let sync = PQgetResult(connection)
        let synced = sync.map { PQresultStatus($0) == PGRES_PIPELINE_SYNC } ?? false
        if let sync { PQclear(sync) }
        guard synced, PQexitPipelineMode(connection) == 1 else { throw brokenPipeline(connection, sql: sql) }
        _ = try beginResult.get()
        if let prepareResult {
            _ = try prepareResult.get()
            remember(sql, as: statement.name)
        }
        return try statementResult.get()
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
