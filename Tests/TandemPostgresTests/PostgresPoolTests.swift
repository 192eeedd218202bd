import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

@Suite struct PostgresPoolTests {
    @Test func reusesItsConnection() throws {
        let pool = PostgresPool(url: try freshDatabase(), size: 2)
        let first: Int64 = try pool.withConnection { try backendPID($0) }
        let second = try pool.withConnection { try backendPID($0) }
        #expect(first == second)
        #expect(pool.idleCount == 1)
    }

    @Test func exhaustedPoolTimesOutUnavailable() throws {
        let pool = PostgresPool(url: try freshDatabase(), size: 1, checkoutTimeout: .milliseconds(300))
        _ = try pool.withConnection { _ in
            let started = ContinuousClock.now
            do {
                try pool.withConnection { _ in Issue.record("a second connection was lent from a pool of one") }
            } catch let error as PostgresError {
                #expect(error.kind == .unavailable)
            }
            #expect(ContinuousClock.now - started >= .milliseconds(300))
        }
        // The connection came back: the next checkout succeeds.
        try pool.healthCheck()
    }

    @Test func connectionsAreOpenedUpToTheBoundOnly() throws {
        let url = try freshDatabase()
        let pool = PostgresPool(url: url, size: 3, checkoutTimeout: .seconds(30))
        let database = String(url.split(separator: "/").last!)
        let observer = try connect(url)
        // More threads than connections, each holding its connection a while.
        concurrently(8) {
            try? pool.withConnection { _ = try $0.queryOne("SELECT pg_sleep(0.2)") { _ in 0 } }
        }
        let open = try observer.queryOne("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
                                         [.text(database)]) { try $0.int64(0) }
        #expect(open == 3)
        #expect(pool.idleCount == 3)
    }

    /// A connection the server ended while it sat idle is discarded at checkout, not lent.
    @Test func terminatedConnectionIsReplaced() throws {
        let url = try freshDatabase()
        let pool = PostgresPool(url: url, size: 1)
        let before = try pool.withConnection { try backendPID($0) }
        let admin = try connect(url)
        #expect(try admin.queryOne("SELECT pg_terminate_backend($1::int)", [.integer(before)]) { try $0.bool(0) } == true)
        // pg_terminate_backend signals; wait until the backend is gone.
        for _ in 0..<500 {
            let present = try admin.queryOne("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [.integer(before)]) { _ in true }
            if present == nil { break }
            usleep(10_000)
        }
        let after = try pool.withConnection { try backendPID($0) }
        #expect(after != before)
    }

    @Test func connectionLeftInATransactionIsNotReused() throws {
        let pool = PostgresPool(url: try freshDatabase(), size: 1)
        let before = try pool.withConnection { connection in
            try connection.execute("BEGIN")
            return try backendPID(connection)
        }
        let after = try pool.withConnection { connection in
            #expect(!connection.isInTransaction)
            return try backendPID(connection)
        }
        #expect(after != before)
    }

    @Test func closedPoolRefusesCheckouts() throws {
        let pool = PostgresPool(url: try freshDatabase(), size: 1)
        try pool.healthCheck()
        pool.close()
        #expect(throws: PostgresError.self) { try pool.healthCheck() }
    }
}
