internal import Dispatch

/// A `write` call's body, waiting for the writer thread or already run by it.
protocol SQLiteWriteJob: AnyObject, Sendable {
    /// Runs the body on the writer connection and keeps its outcome.
    ///
    /// - Returns: whether the body returned without throwing.
    func run(on connection: SQLiteConnection) -> Bool

    /// Records that the job's writes did not commit. An earlier failure of the job's own is
    /// kept: it says more than the batch's.
    func fail(_ error: any Error)

    /// The error the job ended with, if it failed.
    var failure: (any Error)? { get }

    /// Called on the writer thread, in commit order, once the job's writes committed.
    func committed()
}

/// The job of one `write` call, with its result type.
///
/// Thread safety: `outcome` is written only by the writer thread before the job's batch
/// finishes, and read by the calling thread only after ``SQLiteWriteBatch/waitUntilFinished()``
/// returns; the batch's semaphore orders the two.
final class TypedSQLiteWriteJob<T: Sendable>: SQLiteWriteJob, @unchecked Sendable {
    private let body: @Sendable (SQLiteConnection) throws -> T
    private let afterCommit: (@Sendable (T) -> Void)?
    private var outcome: Result<T, any Error>?

    init(_ body: @escaping @Sendable (SQLiteConnection) throws -> T, afterCommit: (@Sendable (T) -> Void)? = nil) {
        self.body = body
        self.afterCommit = afterCommit
    }

    func committed() {
        if let afterCommit, case .success(let value) = outcome { afterCommit(value) }
    }

    func run(on connection: SQLiteConnection) -> Bool {
        do {
            outcome = .success(try body(connection))
            return true
        } catch {
            outcome = .failure(error)
            return false
        }
    }

    func fail(_ error: any Error) {
        if case .failure = outcome { return }
        outcome = .failure(error)
    }

    var failure: (any Error)? {
        if case .failure(let error) = outcome { return error }
        return nil
    }

    /// The body's result, or the error that kept it from committing. Call only after the
    /// batch finished.
    func result() throws -> T {
        guard let outcome else { preconditionFailure("the write job's batch finished without running it") }
        return try outcome.get()
    }
}

/// Jobs committed together in one transaction, and the callers waiting for that commit.
///
/// Thread safety: `jobs` grows only under the write queue's lock while the batch is the open
/// one, and is read only by the writer thread once the queue has handed the batch over.
final class SQLiteWriteBatch: @unchecked Sendable {
    var jobs: [any SQLiteWriteJob] = []
    /// One permit per job, signalled when the batch's transaction is over. Each signal wakes
    /// exactly one caller; a condition broadcast measured slower on two cores, because the
    /// woken callers then queue on the condition's mutex.
    private let finished = DispatchSemaphore(value: 0)

    /// Blocks the calling thread until the writer has committed or given up on the batch.
    func waitUntilFinished() {
        finished.wait()
    }

    /// Releases every caller waiting on the batch (each waits for exactly one permit).
    func finish() {
        for _ in jobs.indices { finished.signal() }
    }
}
