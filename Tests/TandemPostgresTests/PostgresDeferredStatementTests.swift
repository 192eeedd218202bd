import Foundation
import Testing
import TandemPostgres

private struct Abandon: Error {}

/// Statements a write does not need the answer of go out with the next statement that waits
/// (`runDeferred`, decisions P64); a transaction's BEGIN goes with its first statement. What
/// must hold: fewer round trips, the same rows, and a failure that stays with the
/// (sub)transaction it belongs to.
@Suite struct PostgresDeferredStatementTests {
    private func table() throws -> PostgresConnection {
        let connection = try connect(try freshDatabase())
        try connection.execute("CREATE TABLE item (name text PRIMARY KEY)")
        return connection
    }

    private func names(_ connection: PostgresConnection) throws -> [String] {
        try connection.query("SELECT name FROM item ORDER BY name") { try $0.string(0) }
    }

    private let insert = "INSERT INTO item (name) VALUES ($1)"

    @Test func deferredStatementsTravelWithTheNextStatement() throws {
        let connection = try table()
        _ = try names(connection)   // prepared now
        try connection.run(insert, ["warm"])
        let before = connection.roundTrips
        let seen = try connection.transaction(.serializable) { connection in
            for name in ["a", "b", "c"] { try connection.runDeferred(insert, [.text(name)]) }
            #expect(connection.roundTrips == before)
            return try names(connection)
        }
        #expect(seen == ["a", "b", "c", "warm"])
        // BEGIN, the three inserts and the query in one round trip; COMMIT in another.
        #expect(connection.roundTrips - before == 2)
        #expect(try names(connection) == ["a", "b", "c", "warm"])
    }

    @Test func statementsDeferredAtTheEndOfTheBodyAreCommitted() throws {
        let connection = try table()
        try connection.transaction(.serializable) { connection in
            try connection.runDeferred(insert, ["new-sql-prepared-in-the-pipeline"])
            try connection.runDeferred(insert, ["the-same-sql-again"])
        }
        #expect(try names(connection) == ["new-sql-prepared-in-the-pipeline", "the-same-sql-again"])
        #expect(!connection.isInTransaction)
    }

    @Test func aFailedDeferredStatementFailsTheNextStatementAndTheTransaction() throws {
        let connection = try table()
        try connection.run(insert, ["taken"])
        #expect {
            try connection.transaction(.serializable) { connection in
                try connection.runDeferred(insert, ["fresh"])
                try connection.runDeferred(insert, ["taken"])
                return try names(connection)
            }
        } throws: { error in
            guard let error = error as? PostgresError else { return false }
            return error.kind == .conflict && error.sqlState == "23505" && error.sql == insert
        }
        #expect(try names(connection) == ["taken"])
        #expect(!connection.isInTransaction)
    }

    @Test func aFailedDeferredStatementFailsOnlyItsSavepoint() throws {
        let connection = try table()
        try connection.run(insert, ["taken"])
        try connection.transaction(.serializable) { connection in
            try connection.runDeferred(insert, ["outer"])
            #expect {
                try connection.transaction { connection in
                    try connection.runDeferred(insert, ["inner"])
                    try connection.runDeferred(insert, ["taken"])
                }
            } throws: { ($0 as? PostgresError)?.sqlState == "23505" }
            try connection.runDeferred(insert, ["after"])
        }
        #expect(try names(connection) == ["after", "outer", "taken"])
    }

    @Test func aBodyThatThrowsSendsNothingItDeferred() throws {
        let connection = try table()
        try connection.run(insert, ["taken"])
        #expect(throws: Abandon.self) {
            try connection.transaction(.serializable) { connection in
                try connection.runDeferred(insert, ["x"])
                // Would fail if sent: the body's own error must be the one thrown.
                try connection.runDeferred(insert, ["taken"])
                throw Abandon()
            }
        }
        #expect(try names(connection) == ["taken"])
        #expect(try connection.transaction(.serializable) { connection in
            try connection.runDeferred(insert, ["y"])
            return try names(connection)
        } == ["taken", "y"])
    }

    /// P73: a nested transaction's SAVEPOINT goes with its first statement that waits.
    @Test func aSavepointTravelsWithItsFirstStatement() throws {
        let connection = try table()
        _ = try names(connection)   // prepared now
        try connection.run(insert, ["warm"])
        let seen = try connection.transaction(.serializable) { connection in
            _ = try names(connection)   // BEGIN goes out
            let before = connection.roundTrips
            let seen = try connection.transaction { connection in
                try connection.runDeferred(insert, ["inner"])
                #expect(connection.roundTrips == before)
                return try names(connection)
            }
            // SAVEPOINT, the insert and the query in one round trip; RELEASE in another.
            #expect(connection.roundTrips - before == 2)
            return seen
        }
        #expect(seen == ["inner", "warm"])
        #expect(try names(connection) == ["inner", "warm"])
    }

    /// A nested body that throws before anything of it went out drops only what it deferred:
    /// what its enclosing transaction deferred before it is still sent and committed.
    @Test func aNestedBodyThatThrowsBeforeSendingKeepsItsParentsDeferredStatements() throws {
        let connection = try table()
        try connection.run(insert, ["taken"])
        try connection.transaction(.serializable) { connection in
            _ = try names(connection)
            try connection.runDeferred(insert, ["outer"])
            #expect(throws: Abandon.self) {
                try connection.transaction { connection in
                    try connection.runDeferred(insert, ["inner"])
                    try connection.runDeferred(insert, ["taken"])   // would fail if sent
                    throw Abandon()
                }
            }
            // Nested again, failing after it went out: rolled back to its savepoint.
            #expect(throws: Abandon.self) {
                try connection.transaction { connection in
                    try connection.runDeferred(insert, ["inner-2"])
                    _ = try names(connection)
                    throw Abandon()
                }
            }
            try connection.runDeferred(insert, ["after"])
        }
        #expect(try names(connection) == ["after", "outer", "taken"])
        #expect(!connection.isInTransaction)
    }

    @Test func outsideATransactionADeferredStatementRunsAtOnce() throws {
        let connection = try table()
        let before = connection.roundTrips
        try connection.runDeferred(insert, ["now"])
        #expect(connection.roundTrips > before)
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 1)
    }

    @Test func manyDeferredStatementsGoOutInBoundedPipelines() throws {
        let connection = try table()
        try connection.transaction(.serializable) { connection in
            for index in 0..<500 { try connection.runDeferred(insert, [.text("n\(index)")]) }
        }
        #expect(try connection.queryOne("SELECT count(*) FROM item") { try $0.int64(0) } == 500)
    }

    @Test func textWithNULIsRefusedWhenDeferredNotLater() throws {
        let connection = try table()
        try connection.transaction(.serializable) { connection in
            #expect(throws: PostgresError.self) { try connection.runDeferred(insert, [.text("a\u{0}b")]) }
            try connection.runDeferred(insert, ["fine"])
        }
        #expect(try names(connection) == ["fine"])
    }
}
