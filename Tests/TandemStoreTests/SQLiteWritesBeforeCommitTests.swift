import Testing
@testable import TandemStore
@testable import TandemSQLite

/// Writes deferred to just before the commit (decisions E26): run in order, after every
/// savepoint; dropped with a job or savepoint that is rolled back; run at once outside a
/// transaction.
@Suite struct SQLiteWritesBeforeCommitTests {
    /// A job that inserts `key` at once and defers the insert of `key + 1000`.
    static func deferring(_ key: Int, fail: Bool = false) -> @Sendable (SQLiteConnection) throws -> Void {
        { connection in
            try connection.run("INSERT INTO item(key) VALUES (?)", [.integer(Int64(key))])
            try connection.runBeforeCommit("INSERT INTO item(key) VALUES (?)", [.integer(Int64(key + 1000))])
            if fail { throw DeliberateFailure(tag: key) }
        }
    }

    @Test func aBatchRunsTheDeferredWritesOfItsJobsThatCommitted() throws {
        try withItemDatabase { database, _ throws in
            let outcomes = try runInOneBatch(database, (0..<6).map { Self.deferring($0, fail: $0 == 3) })
            #expect(outcomes.filter { (try? $0.value.get()) == nil }.map(\.key) == [3])
            #expect(try itemKeys(database) == [0, 1, 2, 4, 5, 1000, 1001, 1002, 1004, 1005])
        }
    }

    @Test func aJobAloneRunsItsDeferredWritesAndDropsThemWhenItFails() throws {
        try withItemDatabase { database, _ throws in
            try database.write(Self.deferring(1))
            #expect(throws: DeliberateFailure.self) { try database.write(Self.deferring(2, fail: true)) }
            try database.write(Self.deferring(3))
            #expect(try itemKeys(database) == [1, 3, 1001, 1003])
        }
    }

    @Test func theyRunAfterTheBodyInTheOrderDeferredAndSeeItsWrites() throws {
        try withItemDatabase { database, _ throws in
            try database.write { connection in
                // Deferred before item 5 exists: it only sees the data of the commit point.
                try connection.runBeforeCommit("INSERT INTO item(key) SELECT key + 100 FROM item WHERE key = 5", [])
                try connection.runBeforeCommit("UPDATE item SET key = key + 1 WHERE key = 105", [])
                try connection.run("INSERT INTO item(key) VALUES (5)")
                #expect(connection.writesBeforeCommitMark == 2)
            }
            #expect(try itemKeys(database) == [5, 106])
        }
    }

    @Test func aSavepointRolledBackDropsWhatWasDeferredInsideIt() throws {
        try withItemDatabase { database, _ throws in
            try database.write { connection in
                try connection.runBeforeCommit("INSERT INTO item(key) VALUES (1)", [])
                let mark = connection.writesBeforeCommitMark
                try connection.run("SAVEPOINT inner")
                try connection.runBeforeCommit("INSERT INTO item(key) VALUES (2)", [])
                try connection.run("ROLLBACK TO inner")
                try connection.run("RELEASE inner")
                connection.dropWritesBeforeCommit(after: mark)
                try connection.runBeforeCommit("INSERT INTO item(key) VALUES (3)", [])
            }
            #expect(try itemKeys(database) == [1, 3])
        }
    }

    @Test func aFailingDeferredWriteFailsTheWholeBatchAndLeavesNothing() throws {
        try withItemDatabase { database, _ throws in
            try database.write(insertItem(7))
            let outcomes = try runInOneBatch(database, [insertItem(1), { connection in
                try connection.runBeforeCommit("INSERT INTO item(key) VALUES (7)", [])   // a duplicate key, at the commit
            }, insertItem(2)])
            #expect(outcomes.values.allSatisfy { (try? $0.get()) == nil })
            #expect(try itemKeys(database) == [7])
            // The writer goes on: nothing deferred is left behind for the next transaction.
            try database.write(insertItem(8))
            #expect(try itemKeys(database) == [7, 8])
        }
    }
}
