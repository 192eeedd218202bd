internal import Dispatch
internal import Foundation
internal import Synchronization

/// The one connection that writes: a dedicated thread committing queued jobs in groups.
///
/// Group commit: the thread takes a whole batch (every job that queued while it was busy, up
/// to ``maximumJobsPerTransaction``) into one `BEGIN IMMEDIATE … COMMIT`, so many callers
/// share one WAL sync. Each job runs inside its own `SAVEPOINT`: a job that throws, or that
/// leaves a foreign key unresolved, is rolled back alone and its batch-mates still commit.
/// If the transaction as a whole fails (BEGIN, COMMIT, or SQLite abandoning it after an I/O
/// error), every job of the batch gets the error and none of its writes remain.
final class SQLiteWriter: Sendable {
    /// The most jobs committed by one transaction; bounds how long a commit holds the lock.
    static let maximumJobsPerTransaction = 256

    private let queue: SQLiteWriteQueue
    /// Only started, and compared by identity, which is safe from any thread.
    nonisolated(unsafe) private let thread: Thread
    private let exited: DispatchSemaphore
    private let statistics: SQLiteWriterStatistics

    /// Starts the writer thread, which owns `connection` from now on.
    init(connection: sending SQLiteConnection) {
        let confined = SQLiteConfinedConnection(connection)
        let queue = SQLiteWriteQueue(batchLimit: Self.maximumJobsPerTransaction)
        let exited = DispatchSemaphore(value: 0)
        let statistics = SQLiteWriterStatistics()
        let thread = Thread {
            SQLiteWriter.serve(queue, on: confined.connection, statistics: statistics)
            exited.signal()
        }
        thread.name = "tandem-sqlite-writer"
        self.queue = queue
        self.thread = thread
        self.exited = exited
        self.statistics = statistics
        thread.start()
    }

    /// Queues `body`, blocks until its batch is committed, and returns its result.
    ///
    /// - Throws: the body's error (its writes rolled back); the batch's error when the
    ///   transaction failed; `.misuse` once closed.
    func perform<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T,
                              afterCommit: (@Sendable (T) -> Void)? = nil) throws -> T {
        precondition(Thread.current !== thread,
                     "write(_:) called from inside a write job would wait for itself forever")
        let job = TypedSQLiteWriteJob(body, afterCommit: afterCommit)
        let batch = try queue.enqueue(job)
        batch.waitUntilFinished()
        return try job.result()
    }

    /// Refuses new jobs, lets queued ones commit, checkpoints the WAL and closes the
    /// connection. Blocks until done, except on the writer thread itself (a database released
    /// by its last write job), where waiting would never end.
    func close() {
        queue.close()
        guard Thread.current !== thread else { return }
        exited.wait()
    }

    /// Jobs queued and not yet taken into a transaction.
    var pendingJobCount: Int { queue.pendingJobCount }

    /// Transactions run and jobs run so far.
    var counts: (transactions: Int, jobs: Int) {
        (statistics.transactions.load(ordering: .relaxed), statistics.jobs.load(ordering: .relaxed))
    }

    // MARK: The writer thread

    private static func serve(
        _ queue: SQLiteWriteQueue, on connection: SQLiteConnection, statistics: SQLiteWriterStatistics
    ) {
        while let batch = queue.nextBatch() {
            commit(batch.jobs, on: connection)
            statistics.transactions.add(1, ordering: .relaxed)
            statistics.jobs.add(batch.jobs.count, ordering: .relaxed)
            batch.finish()
        }
        // Closed and drained. Fold the WAL back into the database so the file stands alone;
        // another process reading right now makes this a partial checkpoint, which is fine.
        _ = try? connection.firstRow("PRAGMA wal_checkpoint(TRUNCATE)") { _ in () }
        connection.close()
    }

    private static let savepoint = "SAVEPOINT tandem_write_job"
    private static let releaseSavepoint = "RELEASE tandem_write_job"
    private static let rollbackToSavepoint = "ROLLBACK TO tandem_write_job"

    /// Runs `jobs` in one transaction; every job ends with an outcome.
    private static func commit(_ jobs: [any SQLiteWriteJob], on connection: SQLiteConnection) {
        do {
            try connection.runRetryingBusy("BEGIN IMMEDIATE")
        } catch {
            for job in jobs { job.fail(error) }
            return
        }
        guard jobs.count > 1 else {
            // Alone in its transaction, the job needs no savepoint: the transaction is its own.
            let succeeded = jobs[0].run(on: connection)
            if finish(jobs, committing: succeeded, on: connection) { jobs[0].committed() }
            return
        }
        var succeededJobs: [any SQLiteWriteJob] = []
        for job in jobs {
            // Writes the job defers to the commit (E26) go with its savepoint when it fails.
            let mark = connection.writesBeforeCommitMark
            do {
                try connection.run(savepoint)
                var succeeded = job.run(on: connection)
                if succeeded, connection.hasPendingForeignKeyViolations {
                    // A deferred constraint would only fail at COMMIT, taking the whole batch
                    // with it: charge it to the job that caused it, now.
                    job.fail(SQLiteError(
                        code: .constraintForeignKey,
                        message: "FOREIGN KEY constraint failed (deferred, checked at the end of the write)"))
                    succeeded = false
                }
                guard connection.isInTransaction else {
                    // SQLite rolled the whole transaction back (disk full, I/O error): the
                    // writes of earlier jobs are gone too.
                    throw (job.failure as? SQLiteError) ?? SQLiteError(
                        code: .abort,
                        message: "SQLite rolled back the write transaction after an error in another write")
                }
                if succeeded {
                    try connection.run(releaseSavepoint)
                    succeededJobs.append(job)
                } else {
                    connection.resetActiveStatements()
                    try connection.run(rollbackToSavepoint)
                    try connection.run(releaseSavepoint)
                    connection.dropWritesBeforeCommit(after: mark)
                }
            } catch {
                rollback(connection)
                for job in jobs { job.fail(error) }
                return
            }
        }
        if finish(jobs, committing: true, on: connection) {
            for job in succeededJobs { job.committed() }
        }
    }

    /// Commits (or rolls back) the open transaction; a failed commit fails every job. Returns
    /// whether it committed.
    @discardableResult
    private static func finish(_ jobs: [any SQLiteWriteJob], committing: Bool, on connection: SQLiteConnection) -> Bool {
        connection.resetActiveStatements()
        guard committing else {
            rollback(connection)
            return false
        }
        do {
            // Outside every savepoint now: the writes deferred to the commit (E26).
            try connection.flushWritesBeforeCommit()
            try connection.runRetryingBusy("COMMIT")
            return true
        } catch {
            rollback(connection)
            for job in jobs { job.fail(error) }
            return false
        }
    }

    private static func rollback(_ connection: SQLiteConnection) {
        connection.dropWritesBeforeCommit()
        connection.resetActiveStatements()
        // A failed ROLLBACK leaves nothing better to do; SQLite rolls back on close at worst.
        if connection.isInTransaction { try? connection.run("ROLLBACK") }
    }
}

/// Counters the writer thread bumps and anyone may read.
final class SQLiteWriterStatistics: Sendable {
    let transactions = Atomic<Int>(0)
    let jobs = Atomic<Int>(0)
}
