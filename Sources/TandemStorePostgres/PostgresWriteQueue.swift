internal import Dispatch
import TandemCore
internal import TandemStore

/// This process's writes, committed in groups by whichever caller leads (decisions P53).
///
/// ```swift
/// try queue.perform(job) { batch in PostgresGroupCommit.commit(batch, pool: pool) }
/// ```
///
/// Leader and followers, on the callers' own threads: a caller that finds no leader becomes it
/// and commits what is queued (at most ``maximumJobsPerTransaction`` jobs, its own first) in
/// one transaction; callers arriving meanwhile queue and sleep. When its batch is over the
/// leader runs the hooks of the jobs that committed, in commit order, wakes the first queued
/// caller to lead the next batch, then wakes its batch's callers. A lone writer thus commits
/// on its own thread with no hand-over. A caller still queued after ``longestWait`` leaves the
/// queue and is refused `unavailable` (P48's limit); one already taken into a batch waits for it.
final class PostgresWriteQueue: Sendable {
    /// The most jobs one transaction commits: bounds the leader's own wait and how long the
    /// batch holds its rows.
    static let maximumJobsPerTransaction = 64
    /// Longest a write waits to be taken into a batch: as long as one statement may run (P10's
    /// `statement_timeout`), so a write queued longer means the database is stuck, not busy.
    static let longestWait: DispatchTimeInterval = .seconds(30)

    private struct State {
        /// Oldest first; empty whenever no caller leads.
        var pending: [any PostgresWriteJob] = []
        var hasLeader = false
    }

    private let state = Locked(State())

    /// Queues `job` and returns once its batch is over (its outcome is in the job).
    ///
    /// - Parameter commit: runs a batch in one transaction and returns the jobs that
    ///   committed, in order; called on this thread when this caller leads.
    /// - Throws: ``StoreError`` `unavailable` (retry after 5 s) when no batch took the job
    ///   within ``longestWait``.
    func perform(_ job: any PostgresWriteJob, commit: ([any PostgresWriteJob]) -> [any PostgresWriteJob]) throws {
        let leads = state.withLock { state in
            state.pending.append(job)
            if state.hasLeader { return false }
            state.hasLeader = true
            return true
        }
        if !leads {
            if job.wakeUp.wait(timeout: .now() + Self.longestWait) == .timedOut {
                let withdrawn = state.withLock { state in
                    guard !job.mustLead, let index = state.pending.firstIndex(where: { $0 === job }) else { return false }
                    state.pending.remove(at: index)
                    return true
                }
                if withdrawn {
                    throw StoreError(.unavailable, "no write turn within 30 s: the database is not keeping up", retryAfterSeconds: 5)
                }
                job.wakeUp.wait()
            }
            guard job.mustLead else { return }
        }
        lead(job, commit)
    }

    /// Commits the queued jobs (`leader`'s first), hooks them, and hands over.
    private func lead(_ leader: any PostgresWriteJob, _ commit: ([any PostgresWriteJob]) -> [any PostgresWriteJob]) {
        let batch = state.withLock { state in
            let batch = Array(state.pending.prefix(Self.maximumJobsPerTransaction))
            state.pending.removeFirst(batch.count)
            return batch
        }
        // Only the job at the head of the queue leads, and nothing but its own batch removes it.
        precondition(batch.first === leader, "a write led a batch it was not at the head of")
        for job in commit(batch) { job.committed() }
        let next = state.withLock { state -> (any PostgresWriteJob)? in
            guard let first = state.pending.first else {
                state.hasLeader = false
                return nil
            }
            first.mustLead = true
            return first
        }
        // The next batch starts before this one's callers are woken: they only answer clients.
        next?.wakeUp.signal()
        for job in batch.dropFirst() { job.wakeUp.signal() }
    }
}
