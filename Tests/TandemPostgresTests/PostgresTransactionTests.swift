import Testing
import TandemPostgres
import TandemTestSupport

private struct Abandon: Error {}

@Suite struct PostgresTransactionTests {
    private func table() throws -> (url: String, connection: PostgresConnection) {
        let url = try freshDatabase()
        let connection = try connect(url)
        try connection.execute("CREATE TABLE item (name text PRIMARY KEY, n bigint NOT NULL DEFAULT 0)")
        return (url, connection)
    }

    private func names(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT name FROM item ORDER BY name") { try $0.string(0) }
    }

    @Test func commitsWhenTheBodyReturns() throws {
        let (_, connection) = try table()
        let value = try connection.transaction {
            try $0.run("INSERT INTO item (name) VALUES ($1)", ["a"])
            return 5
        }
        #expect(value == 5)
        #expect(try names(connection) == ["a"])
        #expect(!connection.isInTransaction)
    }

    @Test func rollsBackWhenTheBodyThrows() throws {
        let (_, connection) = try table()
        #expect(throws: Abandon.self) {
            try connection.transaction(.serializable) {
                try $0.run("INSERT INTO item (name) VALUES ($1)", ["a"])
                throw Abandon()
            }
        }
        #expect(try names(connection) == [])
        #expect(!connection.isInTransaction)
    }

    @Test func nestedTransactionIsASavepoint() throws {
        let (_, connection) = try table()
        try connection.transaction {
            try $0.run("INSERT INTO item (name) VALUES ($1)", ["outer"])
            #expect(throws: PostgresError.self) { [connection = $0] in
                try connection.transaction {
                    try $0.run("INSERT INTO item (name) VALUES ($1)", ["inner"])
                    try $0.run("INSERT INTO item (name) VALUES ($1)", ["outer"])   // unique violation
                }
            }
            // The outer transaction is still usable after the failed savepoint.
            try $0.transaction { try $0.run("INSERT INTO item (name) VALUES ($1)", ["kept"]) }
        }
        #expect(try names(connection) == ["kept", "outer"])
    }

    @Test func uniqueViolationIsConflict() throws {
        let (_, connection) = try table()
        try connection.run("INSERT INTO item (name) VALUES ($1)", ["a"])
        do {
            try connection.run("INSERT INTO item (name) VALUES ($1)", ["a"])
            Issue.record("duplicate accepted")
        } catch {
            #expect(error.kind == .conflict)
            #expect(error.sqlState == "23505")
            #expect(error.sql == "INSERT INTO item (name) VALUES ($1)")
            #expect(!error.description.contains("\"a\""))
        }
    }

    @Test func commitOfAFailedTransactionThrows() throws {
        let (_, connection) = try table()
        #expect(throws: PostgresError.self) {
            try connection.transaction {
                try $0.run("INSERT INTO item (name) VALUES ($1)", ["a"])
                _ = try? $0.run("SELECT 1/0")   // swallowed: the transaction has failed
            }
        }
        #expect(try names(connection) == [])
    }

    /// Two writers of the same row under REPEATABLE READ and SERIALIZABLE: the one that commits
    /// second lost the race (SQLSTATE 40001), which is retryable.
    @Test(arguments: [PostgresIsolation.repeatableRead, .serializable])
    func concurrentWriterLosesWithRetryable(isolation: PostgresIsolation) throws {
        let (url, first) = try table()
        try first.run("INSERT INTO item (name, n) VALUES ($1, 0)", ["counter"])
        let second = try connect(url)
        do {
            try first.transaction(isolation) {
                _ = try $0.queryOne("SELECT n FROM item WHERE name = $1", ["counter"]) { try $0.int64(0) }
                try second.run("UPDATE item SET n = n + 1 WHERE name = $1", ["counter"])   // commits meanwhile
                try $0.run("UPDATE item SET n = n + 10 WHERE name = $1", ["counter"])
            }
            Issue.record("the second writer committed")
        } catch let error as PostgresError {
            #expect(error.kind == .retryable)
            #expect(error.sqlState == "40001")
        }
        #expect(try first.queryOne("SELECT n FROM item WHERE name = $1", ["counter"]) { try $0.int64(0) } == 1)
    }

    /// The pool runs a transaction that lost its race again, and the second attempt commits.
    @Test func poolRetriesARetryableTransaction() throws {
        let (url, setup) = try table()
        try setup.run("INSERT INTO item (name, n) VALUES ($1, 0)", ["counter"])
        let pool = PostgresPool(url: url, size: 2)
        let other = try connect(url)
        var attempts = 0
        try pool.transaction(.serializable) { connection in
            attempts += 1
            _ = try connection.queryOne("SELECT n FROM item WHERE name = $1", ["counter"]) { try $0.int64(0) }
            if attempts == 1 { try other.run("UPDATE item SET n = n + 1 WHERE name = $1", ["counter"]) }
            try connection.run("UPDATE item SET n = n + 10 WHERE name = $1", ["counter"])
        }
        #expect(attempts == 2)
        #expect(try setup.queryOne("SELECT n FROM item WHERE name = $1", ["counter"]) { try $0.int64(0) } == 11)
    }
}
