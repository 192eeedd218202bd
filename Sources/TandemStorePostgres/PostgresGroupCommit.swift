internal import TandemPostgres

/// One transaction for a batch of write jobs (decisions P53), the counterpart of
/// `SQLiteWriter`'s: `BEGIN ISOLATION LEVEL SERIALIZABLE` once, each job in the savepoint
/// `tandem_write` (rolled back to when its body throws, so its neighbours still commit), one
/// COMMIT. A failed COMMIT (`40001` against another node's writer), a lost connection, or a
/// savepoint that cannot be rolled back to fails every job of the batch, with nothing of it
/// left. A batch of one runs without a savepoint: its transaction is its own.
///
/// One write transaction at a time in the whole cluster (N62): each transaction's first
/// statement, sent with its `BEGIN` in one round trip, is ``writeTurn``, a `LOCK TABLE` on the
/// feed clock in `EXCLUSIVE` mode. Every record write updates that row, so two writers could
/// never both commit; with the lock, the later one waits instead of failing `40001` with its
/// whole batch. `LOCK TABLE` takes no snapshot, so the waiter's snapshot is taken after the
/// holder committed, as P48's gate does within one process; plain reads (`ACCESS SHARE`) are
/// not blocked, and the lock ends with the transaction, whatever ends it.
///
/// A job's deferred statements go out with what ends it (P75): a lone job's with the COMMIT; in
/// a batch, with the `RELEASE` of its savepoint and the next job's `SAVEPOINT`, one round trip,
/// where a failure among them is its own and rolls back only its savepoint. The last job of a
/// batch answers its own before the COMMIT, which would otherwise fail its neighbours with it.
enum PostgresGroupCommit {
    private static let rollbackToSavepoint = "ROLLBACK TO SAVEPOINT tandem_write"
    /// The cluster's write turn (see above).
    static let writeTurn = "LOCK TABLE feed_clock IN EXCLUSIVE MODE"

    /// Runs `jobs` in one transaction on a connection of `pool`; every job ends with an outcome.
    ///
    /// - Returns: the jobs that committed, in commit order.
    static func commit(_ jobs: [any PostgresWriteJob], pool: PostgresPool) -> [any PostgresWriteJob] {
        do {
            return try pool.withConnection { connection in
                var committed: [any PostgresWriteJob] = []
                try connection.transaction(.serializable) { connection in
                    try connection.deferCommand(writeTurn)
                    if jobs.count == 1 {
                        guard jobs[0].run(on: connection, flushing: false) else { throw jobs[0].failure ?? BatchAbandoned() }
                        committed = jobs
                        return
                    }
                    // With the batch's BEGIN, in one round trip (P64).
                    try connection.command("SAVEPOINT tandem_write")
                    for (index, job) in jobs.enumerated() {
                        let isLast = index == jobs.count - 1
                        if job.run(on: connection, flushing: isLast) {
                            if isLast {
                                committed.append(job)
                                break
                            }
                            do throws(PostgresError) {
                                try connection.deferCommand("RELEASE SAVEPOINT tandem_write")
                                try connection.command("SAVEPOINT tandem_write")
                                committed.append(job)
                                continue
                            } catch {
                                job.fail(error)
                            }
                        }
                        // A lost connection takes the batch with it; a failed statement only its job.
                        if let error = job.failure as? PostgresError, error.kind == .unavailable { throw error }
                        guard connection.isInTransaction else { throw job.failure ?? BatchAbandoned() }
                        try connection.execute(rollbackToSavepoint)
                    }
                }
                return committed
            }
        } catch {
            for job in jobs { job.fail(error) }
            return []
        }
    }

    /// Thrown only to roll back; every job keeps its own failure over this one.
    private struct BatchAbandoned: Error {}
}
