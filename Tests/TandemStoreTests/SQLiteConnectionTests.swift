import Testing
import TandemStore
import TandemSQLite

@Suite struct SQLiteConnectionTests {
    private func connectionWithTable() throws -> SQLiteConnection {
        let connection = try SQLiteConnection(path: ":memory:")
        try connection.execute("""
            CREATE TABLE account(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, token TEXT);
            CREATE TABLE t(v INTEGER);
            INSERT INTO t(v) VALUES (1), (2), (3);
            """)
        return connection
    }

    @Test func sameSQLReturnsTheSameCachedStatement() throws {
        let connection = try connectionWithTable()
        let first = try connection.statement("SELECT v FROM t WHERE v > ?")
        let second = try connection.statement("SELECT v FROM t WHERE v > ?")
        let other = try connection.statement("SELECT v FROM t WHERE v < ?")
        #expect(first === second)
        #expect(first !== other)
        _ = try connection.query("SELECT v FROM t WHERE v > ?", [1]) { $0.int64(0) }
        #expect(try connection.statement("SELECT v FROM t WHERE v > ?") === first,
                "query(_:) uses the cache too")
    }

    /// Issue 14: a count cap alone let a few hundred huge generated statements (30,000-value IN
    /// lists) hold gigabytes. The cache is also bounded by bytes, and a statement too big to be
    /// worth keeping is used once and dropped.
    @Test func statementCacheStaysWithinItsByteBudget() throws {
        let connection = try connectionWithTable()
        var peak = 0
        for length in 1_000..<1_300 {
            let sql = "SELECT v FROM t WHERE v IN (" + Array(repeating: "?", count: length).joined(separator: ",") + ")"
            let rows = try connection.query(sql, (0..<length).map { SQLiteValue.integer(Int64($0 % 3)) }) { $0.int64(0) }
            #expect(rows == [1, 2])
            peak = max(peak, connection.cachedStatementBytes)
        }
        #expect(peak <= SQLiteConnection.statementCacheBytes, "peak \(peak) bytes")
        #expect(connection.cachedStatementCount < 300, "the byte budget evicted, not only the count cap")

        let huge = "SELECT v FROM t WHERE v IN (" + Array(repeating: "?", count: 30_000).joined(separator: ",") + ")"
        let statement = try connection.statement(huge)
        #expect(statement.memoryUsed > SQLiteConnection.cachedStatementMaxBytes)
        #expect(try connection.statement(huge) !== statement, "too big to cache: prepared for each use")
        #expect(connection.cachedStatementBytes <= SQLiteConnection.statementCacheBytes)
    }

    @Test func cachedStatementComesBackResetWithBindingsCleared() throws {
        let connection = try connectionWithTable()
        let statement = try connection.statement("SELECT ?, v FROM t ORDER BY v")
        try statement.bind([.integer(7)])
        #expect(try statement.step())
        #expect(statement.int64(0) == 7)
        // Handed out again mid-way: a fresh statement, since that one is still stepping.
        #expect(try connection.statement("SELECT ?, v FROM t ORDER BY v") !== statement)
        statement.reset()
        let again = try connection.statement("SELECT ?, v FROM t ORDER BY v")
        #expect(again === statement)
        #expect(try again.step())
        #expect(again.isNull(0), "bindings are cleared")
        #expect(again.int64(1) == 1, "the statement starts from its first row")
    }

    /// Walking a tree with the same query at each level must not reset the outer walk.
    @Test func nestedQueryWithTheSameSQLLeavesTheOuterOneAlone() throws {
        let connection = try connectionWithTable()
        let sql = "SELECT v FROM t ORDER BY v"
        var outerRows = 0
        let pairs = try connection.query(sql) { outer in
            // A reset outer statement would start over forever; stop it instead.
            outerRows += 1
            guard outerRows <= 3 else { throw DeliberateFailure(tag: outerRows) }
            let value = outer.int64(0)
            let inner = try connection.query(sql) { $0.int64(0) }
            return (value, inner)
        }
        #expect(pairs.map(\.0) == [1, 2, 3])
        #expect(pairs.allSatisfy { $0.1 == [1, 2, 3] })
    }

    @Test func constraintErrorsMatchTheirFamilyAndCarrySQLButNotArguments() throws {
        let connection = try connectionWithTable()
        let insert = "INSERT INTO account(name, token) VALUES (?, ?)"
        try connection.run(insert, [.text("alice"), .text("first-secret")])
        do {
            try connection.run(insert, [.text("alice"), .text("second-secret")])
            Issue.record("a duplicate name was accepted")
        } catch {
            #expect(error.code == .constraintUnique)
            #expect(error.code.primary == .constraint)
            #expect(error.sql == insert)
            #expect(error.message.contains("account.name"))
            #expect(!error.description.contains("secret"))
            #expect(!error.description.contains("alice"))
            switch error.code {
            case .busy: Issue.record("matched the wrong family")
            case .constraint: break
            default: Issue.record("a constraint code did not match .constraint")
            }
        }

        // An untyped `do`, as in code calling through `write`, whose bodies throw `any Error`.
        var caughtByPattern = false
        do throws(any Error) {
            try connection.run("INSERT INTO account(name) VALUES (NULL)")
        } catch SQLiteResultCode.constraint {
            caughtByPattern = true
        }
        #expect(caughtByPattern)
    }

    @Test func unpreparableSQLThrowsWithItsText() throws {
        let connection = try connectionWithTable()
        let error = #expect(throws: SQLiteError.self) { _ = try connection.statement("SELEC 1") }
        #expect(error?.code == .error)
        #expect(error?.sql == "SELEC 1")
        #expect(error?.message.contains("syntax error") == true)
    }

    @Test func statementRefusesASecondStatementButAllowsTrailingComments() throws {
        let connection = try connectionWithTable()
        let error = #expect(throws: SQLiteError.self) {
            _ = try connection.statement("DELETE FROM t; DROP TABLE t")
        }
        #expect(error?.code == .misuse)
        #expect(try connection.queryOne("SELECT count(*) FROM t") { $0.int64(0) } == 3, "nothing ran")
        #expect(try connection.queryOne("SELECT 1; -- the end\n ") { $0.int64(0) } == 1)
    }

    @Test func argumentCountMustMatchTheParameters() throws {
        let connection = try connectionWithTable()
        let error = #expect(throws: SQLiteError.self) {
            try connection.run("INSERT INTO t(v) VALUES (?)")
        }
        #expect(error?.code == .range)
        #expect(throws: SQLiteError.self) { try connection.run("INSERT INTO t(v) VALUES (?)", [1, 2]) }
    }

    @Test func reportsInsertedRowIDAndChanges() throws {
        let connection = try connectionWithTable()
        try connection.run("INSERT INTO account(name) VALUES ('bob')")
        #expect(connection.lastInsertRowID == 1)
        try connection.run("UPDATE t SET v = v + 10 WHERE v >= 2")
        #expect(connection.changes == 2)
    }

    @Test func closeIsIdempotentAndLaterCallsThrow() throws {
        let connection = try connectionWithTable()
        let held = try connection.statement("SELECT v FROM t")
        connection.close()
        connection.close()
        let error = #expect(throws: SQLiteError.self) { try connection.run("SELECT 1") }
        #expect(error?.code == .misuse)
        #expect(throws: SQLiteError.self) { try connection.execute("SELECT 1") }
        #expect(throws: SQLiteError.self, "a statement outliving its connection fails, not crashes") {
            _ = try held.step()
        }
    }

    @Test func readOnlyConnectionRefusesWrites() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/ro.sqlite"
            try SQLiteConnection(path: path).execute("CREATE TABLE t(v)")
            let reader = try SQLiteConnection(path: path, readOnly: true)
            let error = #expect(throws: SQLiteError.self) { try reader.run("INSERT INTO t(v) VALUES (1)") }
            #expect(error?.code.primary == .readonly)
        }
    }

    @Test func openingAMissingDirectoryFails() {
        let error = #expect(throws: SQLiteError.self) {
            _ = try SQLiteConnection(path: "/nonexistent-\(Int.random(in: 0...999_999))/x.sqlite")
        }
        #expect(error?.code.primary == .cantopen)
    }
}
