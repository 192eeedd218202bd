import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

private struct Abandon: Error {}

/// Read-only transactions send `BEGIN` with their first statement and do not wait for their
/// `COMMIT` (decisions P55); the connection must stay correct through failures and in the pool.
@Suite struct PostgresReadTransactionTests {
    private func table() throws -> (url: String, connection: PostgresConnection) {
        let url = try freshDatabase()
        let connection = try connect(url)
        try connection.execute("CREATE TABLE item (name text PRIMARY KEY)")
        return (url, connection)
    }

    private func count(_ connection: PostgresConnection) throws -> Int64 {
        try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } ?? -1
    }

    /// Waits until the server process `pid` is gone (pg_terminate_backend only signals it).
    private func waitUntilGone(_ pid: Int64, admin: PostgresConnection) throws {
        for _ in 0..<500 {
            let present = try admin.queryOne("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [.integer(pid)]) { _ in true }
            if present == nil { return }
            usleep(10_000)
        }
        Issue.record("backend \(pid) still there after 5 s")
    }

    @Test func aOneStatementReadIsOneRoundTrip() throws {
        let (_, connection) = try table()
        _ = try count(connection)   // prepared now
        let before = connection.roundTrips
        let counted = try connection.transaction(.repeatableReadOnly) { try count($0) }
        #expect(counted == 0)
        #expect(connection.roundTrips - before == 1)
        // The COMMIT's answer is read by the connection's next use (here, waiting for it).
        #expect(!connection.isInTransaction)
        // A statement new to the connection is prepared in the same pipeline.
        let fresh = connection.roundTrips
        let one = try connection.transaction(.repeatableReadOnly) { try $0.queryOne("SELECT 1 + 0") { try $0.int64(0) } }
        #expect(one == 1)
        #expect(connection.roundTrips - fresh == 1)
        #expect(!connection.isInTransaction)
        // The same read in a transaction that may write sends BEGIN with the statement too (P64),
        // and waits for its COMMIT.
        let writable = connection.roundTrips
        _ = try connection.transaction(.repeatableRead) { try count($0) }
        #expect(connection.roundTrips - writable == 2)
    }

    @Test func aReadWithoutStatementsSendsNothing() throws {
        let (_, connection) = try table()
        let before = connection.roundTrips
        #expect(try connection.transaction(.repeatableReadOnly) { _ in 7 } == 7)
        #expect(connection.roundTrips == before)
        #expect(!connection.isInTransaction)
    }

    @Test func theNextStatementRunsOutsideTheFinishedRead() throws {
        let (_, connection) = try table()
        _ = try connection.transaction(.repeatableReadOnly) { try count($0) }
        // Still inside the read-only transaction, this would say "on" and the insert would fail (25006).
        let readOnly = try connection.queryOne("SELECT current_setting('transaction_read_only')") { try $0.string(0) }
        #expect(readOnly == "off")
        try connection.run("INSERT INTO item VALUES ($1)", ["a"])
        #expect(!connection.isInTransaction)
        #expect(try count(connection) == 1)
    }

    @Test func aPipelinedReadKeepsOneSnapshotAndRefusesWrites() throws {
        let (url, connection) = try table()
        let other = try connect(url)
        let (first, second) = try connection.transaction(.repeatableReadOnly) { reading in
            let first = try count(reading)
            try other.run("INSERT INTO item VALUES ($1)", ["committed meanwhile"])
            return (first, try count(reading))
        }
        #expect(first == 0 && second == 0)
        #expect(try count(connection) == 1)
        #expect {
            try connection.transaction(.repeatableReadOnly) { try $0.run("INSERT INTO item VALUES ($1)", ["b"]) }
        } throws: { ($0 as? PostgresError)?.sqlState == "25006" }
        #expect(!connection.isInTransaction)
    }

    @Test func aFailedFirstStatementLeavesThePooledConnectionIdleAndUsable() throws {
        let (url, _) = try table()
        let pool = PostgresPool(url: url, size: 1)
        let pid = try pool.withConnection { try backendPID($0) }
        #expect {
            try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try $0.queryOne("SELECT 1 / $1::int", [0]) { try $0.int64(0) } } }
        } throws: { ($0 as? PostgresError)?.sqlState == "22012" }
        // A statement the server cannot prepare fails in the pipeline too, and is not cached.
        let cached = try pool.withConnection { $0.cachedStatementCount }
        #expect {
            try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try $0.queryOne("SELEC 1") { try $0.int64(0) } } }
        } throws: { ($0 as? PostgresError)?.sqlState == "42601" }
        try pool.withConnection { connection in
            #expect(!connection.isInTransaction)
            #expect(connection.cachedStatementCount == cached)
            let same = try backendPID(connection)
            #expect(same == pid)
        }
        let counted = try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try count($0) } }
        #expect(counted == 0)
        #expect(pool.idleCount == 1)
    }

    @Test func aBodyThatSwallowedAFailedStatementStillFails() throws {
        let (_, connection) = try table()
        #expect {
            try connection.transaction(.repeatableReadOnly) { reading in
                _ = try count(reading)
                _ = try? reading.queryOne("SELECT 1 / $1::int", [0]) { try $0.int64(0) }
                return 1
            }
        } throws: { ($0 as? PostgresError)?.kind == .other }
        #expect(!connection.isInTransaction)
        #expect(try count(connection) == 0)
    }

    @Test func aBodyThatThrowsAfterItsFirstStatementRollsBack() throws {
        let (_, connection) = try table()
        #expect(throws: Abandon.self) {
            try connection.transaction(.repeatableReadOnly) { reading in
                _ = try count(reading)
                throw Abandon()
            }
        }
        #expect(!connection.isInTransaction)
        #expect(try count(connection) == 0)
    }

    @Test func aTerminatedBackendMakesThePipelinedReadUnavailable() throws {
        let (url, connection) = try table()
        let pid = try connection.transaction(.repeatableReadOnly) { try backendPID($0) }
        let admin = try connect(url)
        _ = try admin.queryOne("SELECT pg_terminate_backend($1::int)", [.integer(pid)]) { try $0.bool(0) }
        try waitUntilGone(pid, admin: admin)
        #expect {
            try connection.transaction(.repeatableReadOnly) { try count($0) }
        } throws: { ($0 as? PostgresError)?.kind == .unavailable }
        #expect(!connection.isHealthy)
    }

    @Test func thePoolReusesAConnectionWithItsCommitInFlightAndRecoversWhenItsBackendEnds() throws {
        let (url, _) = try table()
        let pool = PostgresPool(url: url, size: 1)
        let pid = try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try backendPID($0) } }
        for _ in 0..<20 {
            #expect(try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try backendPID($0) } } == pid)
        }
        // A write right after a read on the same connection begins a transaction of its own.
        try pool.transaction(.serializable) { try $0.run("INSERT INTO item VALUES ($1)", ["w"]) }
        #expect(try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try count($0) } } == 1)
        #expect(pool.idleCount == 1)
        // The backend ends while the connection waits in the pool, its last COMMIT perhaps unread.
        // When the checkout reads that answer and sees the end, it opens a new connection; when
        // the end arrives after that answer, the next read fails `unavailable` (once) and the
        // pool drops the connection. Either way the read after that runs on a new backend.
        let admin = try connect(url)
        _ = try admin.queryOne("SELECT pg_terminate_backend($1::int)", [.integer(pid)]) { try $0.bool(0) }
        try waitUntilGone(pid, admin: admin)
        let replaced: Int64
        do {
            replaced = try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try backendPID($0) } }
        } catch let error as PostgresError where error.kind == .unavailable {
            replaced = try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try backendPID($0) } }
        }
        #expect(replaced != pid)
        #expect(try pool.withConnection { try $0.transaction(.repeatableReadOnly) { try count($0) } } == 1)
    }

    /// The error `body` throws; nil when it returns.
    private func thrown(_ body: () throws -> Void) -> (any Error)? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// Ends every other backend of the database (the pool's), and waits until they are gone.
    private func endOtherBackends(admin: PostgresConnection) throws {
        _ = try admin.query("""
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            """) { try $0.bool(0) }
        for _ in 0..<500 {
            let left = try admin.queryOne("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()") {
                try $0.int64(0)
            }
            if left == 0 { return }
            usleep(10_000)
        }
        Issue.record("other backends still there after 5 s")
    }

    /// The backend ends after the checkout's check and before the read's first statement (the
    /// race P55's test met): the read runs again on a new connection and answers (P68).
    @Test func aReadWhoseFirstStatementMeetsADeadPooledConnectionRunsAgainOnce() throws {
        let (url, _) = try table()
        let pool = PostgresPool(url: url, size: 1)
        let pid = try pool.read { try backendPID($0) }
        let admin = try connect(url)
        var attempts = 0
        let counted = try pool.read { connection in
            attempts += 1
            if attempts == 1 { try endOtherBackends(admin: admin) }
            return try count(connection)
        }
        #expect(counted == 0)
        #expect(attempts == 2)
        #expect(try pool.read { try backendPID($0) } != pid)
    }

    /// Once only: when the second connection is dead at its first statement too, the read fails
    /// `unavailable`, and the pool recovers after it.
    @Test func aReadRunsAgainOnlyOnce() throws {
        let (url, _) = try table()
        let pool = PostgresPool(url: url, size: 1)
        _ = try pool.read { try backendPID($0) }
        let admin = try connect(url)
        var attempts = 0
        let failure = thrown {
            _ = try pool.read { connection in
                attempts += 1
                try endOtherBackends(admin: admin)
                return try count(connection)
            }
        }
        #expect((failure as? PostgresError)?.kind == .unavailable, "\(String(describing: failure))")
        #expect(attempts == 2)
        #expect(try pool.read { try count($0) } == 0)
    }

    /// A connection lost after the body's first answer fails the read: the body has seen part
    /// of a snapshot, so it is not run again.
    @Test func aConnectionLostAfterTheFirstAnswerFailsTheRead() throws {
        let (url, _) = try table()
        let pool = PostgresPool(url: url, size: 1)
        let admin = try connect(url)
        var attempts = 0
        let failure = thrown {
            _ = try pool.read { connection in
                attempts += 1
                _ = try count(connection)
                try endOtherBackends(admin: admin)
                return try count(connection)
            }
        }
        #expect((failure as? PostgresError)?.kind == .unavailable, "\(String(describing: failure))")
        #expect(attempts == 1)
    }
}
