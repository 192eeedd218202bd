internal import Dispatch
internal import Foundation
import TandemCore

/// A bounded set of connections to one database, lent to one thread at a time.
///
/// ```swift
/// let pool = PostgresPool(url: url, size: 16)
/// let count = try pool.withConnection { try $0.queryOne("SELECT count(*) FROM zone") { try $0.int64(0) } }
/// try pool.transaction(.serializable) { try $0.run("UPDATE zone SET seq = seq + 1 WHERE id = $1", [.integer(id)]) }
/// ```
///
/// Connections open lazily, up to `size`. A caller finding none free waits up to
/// `checkoutTimeout`, then gets ``PostgresError/Kind/unavailable``. Before lending an idle
/// connection the pool reads what the server sent meanwhile, without a round trip, and
/// discards the connection if the server closed it (a restart, a crash, an administrator's
/// `pg_terminate_backend`); a connection that broke while lent, or is returned inside a
/// transaction, is discarded too. A new connection replaces it on the next checkout, so after a
/// restart the pool reconnects by itself: while the server is down each checkout fails at once
/// with `.unavailable` (connection refused) — never hangs — and succeeds again once it is up.
///
/// Blocking, like ``PostgresConnection``: call it from worker threads.
public final class PostgresPool: Sendable {
    /// The connection string every connection opens with.
    public let url: String
    /// Most connections open at once.
    public let size: Int
    /// How long a checkout waits for a connection to come free.
    public let checkoutTimeout: Duration
    private let statementTimeout: Duration?
    private let idleInTransactionTimeout: Duration?

    private struct State: ~Copyable {
        var idle: [PostgresConfinedConnection] = []
        var closed = false
    }

    private let state = Locked(State())
    /// One permit per connection that may be lent: `size` in all.
    private let permits: DispatchSemaphore

    /// A pool; no connection opens until the first checkout.
    ///
    /// - Parameters:
    ///   - size: most connections, at least 1.
    ///   - checkoutTimeout: longest wait for a free connection.
    ///   - statementTimeout: each connection's `statement_timeout` (see ``PostgresConnection``).
    ///   - idleInTransactionTimeout: each connection's `idle_in_transaction_session_timeout`.
    public init(url: String, size: Int, checkoutTimeout: Duration = .seconds(5), statementTimeout: Duration? = .seconds(30),
                idleInTransactionTimeout: Duration? = nil) {
        precondition(size >= 1, "a pool needs at least one connection")
        self.url = url
        self.size = size
        self.checkoutTimeout = checkoutTimeout
        self.statementTimeout = statementTimeout
        self.idleInTransactionTimeout = idleInTransactionTimeout
        permits = DispatchSemaphore(value: size)
    }

    /// Connections open and idle now (for tests and diagnostics).
    public var idleCount: Int { state.withLock { $0.idle.count } }

    /// Runs `body` with a connection of its own.
    ///
    /// - Throws: what `body` throws; ``PostgresError/Kind/unavailable`` when no connection came
    ///   free within ``checkoutTimeout``, when a new one could not be opened, or after ``close()``.
    @discardableResult
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let lent = try checkOut()
        do {
            let value = try body(lent.connection)
            checkIn(lent)
            return value
        } catch {
            checkIn(lent)
            throw error
        }
    }

    /// Runs `body` in a transaction on a connection of its own, running it again from the
    /// start (up to `attempts` times in all, on a fresh transaction) while it fails with
    /// ``PostgresError/Kind/retryable``. `body` must therefore do nothing outside the database
    /// that cannot happen twice (send, notify, count): do that after this returns.
    ///
    /// - Throws: as ``withConnection(_:)`` and ``PostgresConnection/transaction(_:_:)``; the
    ///   last attempt's error when every attempt lost its race.
    @discardableResult
    public func transaction<T>(
        _ isolation: PostgresIsolation = .readCommitted, attempts: Int = 3, _ body: (PostgresConnection) throws -> T
    ) throws -> T {
        var attempt = 1
        while true {
            do {
                return try withConnection { try $0.transaction(isolation, body) }
            } catch let error as PostgresError where error.kind == .retryable && attempt < attempts {
                attempt += 1
                // A short random pause so that the racing transactions do not collide again in step.
                Thread.sleep(forTimeInterval: Double.random(in: 0.001...0.01) * Double(attempt))
            }
        }
    }

    /// Runs `body` in a read-only transaction (`isolation`, whose `BEGIN` travels with the first
    /// statement, decisions P55) on a connection of its own. When that first statement finds the
    /// connection dead (``PostgresError/isAtReadStart``: its backend ended while it waited in the
    /// pool, too late for the checkout's check to see), `body` runs once more from its start on
    /// another connection (decisions P68): it had seen no answer, and a read writes nothing.
    ///
    /// - Throws: as ``withConnection(_:)`` and ``PostgresConnection/transaction(_:_:)``; the
    ///   second attempt's error when the database is really gone.
    @discardableResult
    public func read<T>(_ isolation: PostgresIsolation = .repeatableReadOnly, _ body: (PostgresConnection) throws -> T) throws -> T {
        precondition(isolation.isReadOnly, "PostgresPool.read runs read-only transactions")
        do {
            return try withConnection { try $0.transaction(isolation, body) }
        } catch let error as PostgresError where error.isAtReadStart {
            return try withConnection { try $0.transaction(isolation, body) }
        }
    }

    /// Runs `body`, a read that usually runs one statement, without a transaction: its one
    /// statement alone on the server, with a snapshot of its own (decisions P72). When `body`
    /// goes on to a second statement (which is not sent), or its first finds the connection
    /// dead, `body` runs again from its start in a read-only transaction (``read(_:_:)``). So
    /// `body` may run twice: it must have no effect but its result.
    ///
    /// - Throws: as ``read(_:_:)``.
    @discardableResult
    public func readSingleStatement<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try withConnection { try $0.singleStatementRead(body) }
        } catch let error as PostgresError where error.needsSnapshot || error.isAtReadStart {
            return try read(.repeatableReadOnly, body)
        }
    }

    /// Opens a connection and runs `SELECT 1` on it, for a readiness probe.
    ///
    /// - Throws: ``PostgresError/Kind/unavailable`` while the server cannot be reached.
    public func healthCheck() throws {
        try withConnection { connection in
            _ = try connection.queryOne("SELECT 1") { try $0.int64(0) }
        }
    }

    /// Closes every idle connection, and each lent one as it comes back; later checkouts throw.
    public func close() {
        let idle = state.withLock { state in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for lent in idle { lent.connection.close() }
    }

    private func checkOut() throws(PostgresError) -> PostgresConfinedConnection {
        let deadline = DispatchTime.now() + .nanoseconds(Int(checkoutTimeout.components.seconds * 1_000_000_000
            + checkoutTimeout.components.attoseconds / 1_000_000_000))
        guard permits.wait(timeout: deadline) == .success else {
            throw PostgresError(kind: .unavailable, message: "no database connection came free within \(checkoutTimeout) (pool of \(size))")
        }
        do {
            while let candidate = try popIdle() {
                if candidate.connection.isHealthy { return candidate }
                candidate.connection.close()
            }
            return PostgresConfinedConnection(try PostgresConnection(url: url, statementTimeout: statementTimeout,
                                                                     idleInTransactionTimeout: idleInTransactionTimeout))
        } catch {
            permits.signal()
            throw error
        }
    }

    private func popIdle() throws(PostgresError) -> PostgresConfinedConnection? {
        try state.withLock { (state) throws(PostgresError) -> PostgresConfinedConnection? in
            guard !state.closed else { throw PostgresError.closed("the pool") }
            return state.idle.popLast()
        }
    }

    private func checkIn(_ lent: PostgresConfinedConnection) {
        defer { permits.signal() }
        // A connection left inside a transaction (a body that escaped one) or broken is not reused;
        // one whose read-only COMMIT is still in flight is (decisions P55).
        guard lent.connection.isReusable else {
            lent.connection.close()
            return
        }
        let kept = state.withLock { state in
            guard !state.closed else { return false }
            state.idle.append(lent)
            return true
        }
        if !kept { lent.connection.close() }
    }
}

/// A connection handed between threads by the pool, which lends it to one thread at a time.
///
/// Thread safety: `@unchecked` because ``PostgresConnection`` is not `Sendable`; the pool's
/// check-out and check-in are what make the hand-offs safe.
final class PostgresConfinedConnection: @unchecked Sendable {
    let connection: PostgresConnection

    init(_ connection: sending PostgresConnection) {
        self.connection = connection
    }
}
