internal import Dispatch
import TandemCore

/// Write jobs waiting for the writer thread, already grouped into the batches it will commit.
///
/// Callers append to the newest batch, which takes jobs until it holds
/// ``SQLiteWriter/maximumJobsPerTransaction``; the writer takes the oldest batch whole. So a
/// batch is exactly "every job that arrived while the writer was busy with the previous one",
/// and each caller knows its batch at once and waits on that batch alone.
final class SQLiteWriteQueue: Sendable {
    private struct State {
        /// Oldest first; only the last one takes new jobs.
        var batches: [SQLiteWriteBatch] = []
        var pendingJobCount = 0
        /// The writer is (about to be) blocked on `wakeWriter` and needs one signal.
        var isWriterIdle = false
        var isClosed = false
    }

    private let state = Locked(State())
    private let wakeWriter = DispatchSemaphore(value: 0)
    private let batchLimit: Int

    init(batchLimit: Int) {
        self.batchLimit = batchLimit
    }

    /// Adds `job` to the open batch and returns that batch.
    ///
    /// - Throws: ``SQLiteError`` `.misuse` once the queue is closed.
    func enqueue(_ job: any SQLiteWriteJob) throws(SQLiteError) -> SQLiteWriteBatch {
        let batchLimit = batchLimit
        let (batch, wake) = try state.withLock { (state) throws(SQLiteError) -> (SQLiteWriteBatch, Bool) in
            guard !state.isClosed else { throw SQLiteError.closed("the database") }
            let batch: SQLiteWriteBatch
            if let open = state.batches.last, open.jobs.count < batchLimit {
                batch = open
            } else {
                batch = SQLiteWriteBatch()
                state.batches.append(batch)
            }
            batch.jobs.append(job)
            state.pendingJobCount += 1
            let wake = state.isWriterIdle
            state.isWriterIdle = false
            return (batch, wake)
        }
        if wake { wakeWriter.signal() }
        return batch
    }

    /// The oldest batch, blocking while there is none; `nil` once the queue is closed and
    /// empty. Called by the writer thread only.
    func nextBatch() -> SQLiteWriteBatch? {
        while true {
            let taken: SQLiteWriteBatch?? = state.withLock { state in
                if !state.batches.isEmpty {
                    let batch = state.batches.removeFirst()
                    state.pendingJobCount -= batch.jobs.count
                    return .some(batch)
                }
                if state.isClosed { return .some(nil) }
                state.isWriterIdle = true
                return nil
            }
            if let taken { return taken }
            wakeWriter.wait()
        }
    }

    /// Refuses new jobs from now on; jobs already queued still run.
    func close() {
        let wake = state.withLock { state in
            state.isClosed = true
            let wake = state.isWriterIdle
            state.isWriterIdle = false
            return wake
        }
        if wake { wakeWriter.signal() }
    }

    /// Jobs queued and not yet taken by the writer.
    var pendingJobCount: Int {
        state.withLock { $0.pendingJobCount }
    }
}
