import Foundation
import Testing
import TandemPostgres
import TandemTestSupport

/// A read of one statement runs it without a transaction; a second statement makes the read run
/// again in a read-only transaction (decisions P72).
@Suite struct PostgresSingleStatementReadTests {
    private func table() throws -> (url: String, pool: PostgresPool) {
        let url = try freshDatabase()
        let connection = try connect(url)
        try connection.execute("CREATE TABLE item (name text PRIMARY KEY)")
        return (url, PostgresPool(url: url, size: 1))
    }

    private func count(_ connection: PostgresConnection) throws -> Int64 {
        try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } ?? -1
    }


    @Test func oneStatementRunsAloneInOneRoundTrip() throws {
        let (_, pool) = try table()
        _ = try pool.readSingleStatement { try count($0) }   // prepared now
        var runs = 0
        let (counted, trips): (Int64, Int) = try pool.readSingleStatement { connection in
            runs += 1
            let before = connection.roundTrips
            let counted = try count(connection)
            return (counted, connection.roundTrips - before)
        }
        #expect(counted == 0 && trips == 1 && runs == 1)
        // Nothing was left open: the pooled connection is idle and writes as usual.
        try pool.transaction(.serializable) { try $0.run("INSERT INTO item VALUES ($1)", ["a"]) }
        #expect(try pool.readSingleStatement { try count($0) } == 1)
        #expect(pool.idleCount == 1)
        // The server reports no transaction block open after the statement (its ReadyForQuery).
        let open = try pool.readSingleStatement { connection -> Bool in
            _ = try count(connection)
            return connection.isInTransaction
        }
        #expect(!open)
    }

    @Test func aSecondStatementRunsTheReadAgainInOneSnapshot() throws {
        let (url, pool) = try table()
        let other = try connect(url)
        var runs = 0
        let (first, second, block) = try pool.readSingleStatement { connection -> (Int64, Int64, Bool) in
            runs += 1
            let first = try count(connection)
            try other.run("INSERT INTO item VALUES ($1)", [.text("committed meanwhile \(runs)")])
            return (first, try count(connection), connection.isInTransaction)
        }
        // The first run stopped before its second statement was sent; the second run saw one snapshot.
        #expect(runs == 2)
        #expect(first == second && first == 1)
        #expect(block)
        #expect(try pool.readSingleStatement { try count($0) } == 2)
        #expect(pool.idleCount == 1)
    }

    @Test func aFailingStatementIsNotRunAgainAndLeavesTheConnectionUsable() throws {
        let (_, pool) = try table()
        var runs = 0
        #expect {
            try pool.readSingleStatement { connection in
                runs += 1
                return try connection.queryOne("SELECT 1 / $1::int", [0]) { try $0.int64(0) }
            }
        } throws: { ($0 as? PostgresError)?.sqlState == "22012" }
        #expect(runs == 1)
        #expect(try pool.readSingleStatement { try count($0) } == 0)
        #expect(pool.idleCount == 1)
    }

    @Test func aDeadPooledConnectionAtTheStatementRunsTheReadAgain() throws {
        let (url, pool) = try table()
        let pid = try pool.readSingleStatement { try backendPID($0) }
        let admin = try connect(url)
        var runs = 0
        let counted = try pool.readSingleStatement { connection in
            runs += 1
            if runs == 1 {
                _ = try admin.queryOne("SELECT pg_terminate_backend($1::int)", [.integer(pid)]) { try $0.bool(0) }
                for _ in 0..<500 {
                    let present = try admin.queryOne("SELECT 1 FROM pg_stat_activity WHERE pid = $1::int", [.integer(pid)]) { _ in true }
                    if present == nil { break }
                    usleep(10_000)
                }
            }
            return try count(connection)
        }
        #expect(counted == 0 && runs == 2)
        #expect(try pool.readSingleStatement { try backendPID($0) } != pid)
    }

    @Test func aTransactionInsideIsRefusedAndTheReadRunsAgain() throws {
        let (_, pool) = try table()
        var runs = 0
        let counted = try pool.readSingleStatement { connection in
            runs += 1
            return try connection.transaction(.repeatableReadOnly) { try count($0) }
        }
        #expect(counted == 0 && runs == 2)
    }
}
