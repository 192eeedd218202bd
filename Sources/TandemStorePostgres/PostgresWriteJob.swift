internal import Dispatch
internal import TandemPostgres
internal import TandemStore

/// A `write` call's body and hook, queued or run by the leader of its batch (decisions P53).
///
/// Thread safety: the outcome is written only by the thread leading the job's batch, before it
/// signals ``wakeUp``, and read by the calling thread only after that signal; ``mustLead`` is
/// written and read under ``PostgresWriteQueue``'s lock (or after ``wakeUp``, which orders it).
protocol PostgresWriteJob: AnyObject, Sendable {
    /// Runs the body on `connection`, inside the batch's transaction, and keeps its outcome.
    /// With `flushing`, the statements it deferred are answered before this returns; without,
    /// they stay deferred for the caller to send with the statement that ends the job's
    /// savepoint or transaction, whose failure is then the job's (P75).
    ///
    /// - Returns: whether the body returned without throwing and left the transaction usable.
    func run(on connection: PostgresConnection, flushing: Bool) -> Bool

    /// Records that the job's writes did not commit. An earlier failure of the job's own is
    /// kept: it says more than the batch's.
    func fail(_ error: any Error)

    /// The error the job ended with, if it failed.
    var failure: (any Error)? { get }

    /// Runs the hook, once the job's batch committed, on the leader's thread, in commit order.
    func committed()

    /// Signalled once: when the job's batch is over, or when the job must lead the next batch.
    var wakeUp: DispatchSemaphore { get }

    /// Set by the leader before it wakes this job to lead the next batch.
    var mustLead: Bool { get set }
}

/// The job of one `PostgresStore.write` call, with its result type.
final class TypedPostgresWriteJob<T: Sendable>: PostgresWriteJob, @unchecked Sendable {
    private let body: @Sendable (any StoreWriting) throws -> T
    private let afterCommit: @Sendable (T) -> Void
    private var outcome: Result<T, any Error>?
    let wakeUp = DispatchSemaphore(value: 0)
    var mustLead = false

    init(_ body: @escaping @Sendable (any StoreWriting) throws -> T, afterCommit: @escaping @Sendable (T) -> Void) {
        self.body = body
        self.afterCommit = afterCommit
    }

    func run(on connection: PostgresConnection, flushing: Bool) -> Bool {
        do {
            let value = try body(PostgresStoreTransaction(connection))
            // Its deferred statements are answered before its savepoint ends, so a failure among
            // them is this write's alone (P64).
            if flushing { try connection.flushDeferred() }
            // A body that caught a failed statement's error and went on would otherwise commit
            // nothing of itself while being told it succeeded (P12), here at its neighbours' cost.
            // (Unflushed, its savepoint's end fails instead.)
            guard !connection.isInFailedTransaction else {
                throw PostgresError(kind: .other, message: "a statement of the write failed and the write went on; it was rolled back")
            }
            outcome = .success(value)
            return true
        } catch {
            // What it deferred is rolled back with its savepoint, never sent (P64).
            connection.discardDeferred()
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

    func committed() {
        if case .success(let value) = outcome { afterCommit(value) }
    }

    /// The body's result, or the error that kept it from committing. Call only after the batch
    /// finished.
    func result() throws -> T {
        guard let outcome else { preconditionFailure("the write job's batch finished without running it") }
        return try outcome.get()
    }
}
