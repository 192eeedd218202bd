internal import Dispatch
internal import TandemStore

/// Lets this process's writes into the database one at a time (decisions P48).
///
/// ```swift
/// let value = try gate.holding { try pool.withConnection { … } }
/// ```
///
/// Taken before a write checks out its connection and sends `BEGIN`, let go after its COMMIT
/// (or ROLLBACK) and its `afterCommit` hook: a waiting writer's snapshot is therefore taken
/// after the writer before it committed, so writers of one node wait for each other instead of
/// failing `40001` on the zone row and the feed clock. Writers of other nodes still race and
/// fail `retryable` (P3). Reads never take it.
final class PostgresWriterGate: Sendable {
    /// Longest a write waits for its turn: as long as one statement may run (P10's
    /// `statement_timeout`), so a write queued longer means the database is stuck, not busy.
    static let longestWait: DispatchTimeInterval = .seconds(30)

    private let turn = DispatchSemaphore(value: 1)

    /// Runs `body` while no other write of this process runs.
    ///
    /// - Throws: what `body` throws; ``StoreError`` `unavailable` (retry after 5 s) when the
    ///   turn did not come within ``longestWait``.
    func holding<T>(_ body: () throws -> T) throws -> T {
        guard turn.wait(timeout: .now() + Self.longestWait) == .success else {
            throw StoreError(.unavailable, "no write turn within 30 s: the database is not keeping up", retryAfterSeconds: 5)
        }
        defer { turn.signal() }
        return try body()
    }
}
