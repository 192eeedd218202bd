import Dispatch
import Foundation
import Synchronization
import Testing
import TandemStore
import TandemSQLite

@Suite struct SQLiteDatabaseReadTests {
    @Test func readsSeeEachWriteOnceItReturns() throws {
        try withItemDatabase { database, _ throws in
            for key in 0..<100 {
                try database.write(insertItem(key))
                let count = try database.read { try $0.queryOne("SELECT count(*) FROM item") { $0.int64(0) } }
                #expect(count == Int64(key + 1))
            }
        }
    }

    @Test func readsDoNotSeeAWriteBeforeItCommits() throws {
        try withItemDatabase { database, _ throws in
            let inserted = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let writer = onThread {
                _ = try? database.write { connection in
                    try insertItem(1)(connection)
                    inserted.signal()
                    release.wait()
                }
            }
            inserted.wait()
            let whileUncommitted = Result { try itemKeys(database) }
            release.signal()
            writer.wait()
            #expect(try whileUncommitted.get() == [])
            #expect(try itemKeys(database) == [1])
        }
    }

    @Test func oneReadSeesOneSnapshotEvenWhenAWriteCommitsMeanwhile() throws {
        try withItemDatabase { database, _ throws in
            try database.write(insertItem(1))
            let counts = try database.read { connection in
                let count = { try connection.queryOne("SELECT count(*) FROM item") { $0.int64(0) } }
                let before = try count()
                try database.write(insertItem(2))   // commits while this read is open
                let keys = try connection.query("SELECT key FROM item") { $0.int64(0) }
                return (before, try count(), keys.count)
            }
            #expect(counts == (1, 1, 1))
            #expect(try itemKeys(database) == [1, 2])
        }
    }

    @Test func readsRunInParallelUpToTheReaderCount() throws {
        try withItemDatabase(readerCount: 4) { database, _ throws in
            try database.write(insertItem(1))
            let inside = Atomic<Int>(0)
            let sawAllFour = Outcomes<Bool>()
            onThreads(4) { index in
                let result = try? database.read { connection -> Bool in
                    _ = try connection.queryOne("SELECT count(*) FROM item") { $0.int64(0) }
                    inside.add(1, ordering: .sequentiallyConsistent)
                    // Stay inside until all four are: only possible if they run at once.
                    return eventually(timeout: .seconds(10)) { inside.load(ordering: .sequentiallyConsistent) == 4 }
                }
                sawAllFour.record(index, result ?? false)
            }
            #expect(sawAllFour.all.count == 4)
            #expect(sawAllFour.all.values.allSatisfy { $0 })
        }
    }

    @Test func eachThreadReadsOnItsOwnConnection() throws {
        try withItemDatabase(readerCount: 1) { database, _ throws in
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let order = Outcomes<Int>()
            let step = Atomic<Int>(0)
            let first = onThread {
                _ = try? database.read { _ in
                    holding.signal()
                    release.wait()
                    order.record(0, step.add(1, ordering: .sequentiallyConsistent).newValue)
                }
            }
            holding.wait()
            // Another thread is not held up by the first one's open read.
            let second = onThread {
                _ = try? database.read { _ in
                    order.record(1, step.add(1, ordering: .sequentiallyConsistent).newValue)
                }
            }
            second.wait()
            #expect(order.all == [1: 1])
            release.signal()
            first.wait()
            #expect(order.all == [1: 1, 0: 2])
        }
    }

    @Test func nestedReadOnOneThreadBorrowsAnotherConnection() throws {
        try withItemDatabase(readerCount: 1) { database, _ throws in
            let inner = try database.read { _ in
                try database.read { connection in try connection.queryOne("SELECT 41 + 1") { $0.int64(0) } }
            }
            #expect(inner == 42)
        }
    }

    @Test func readConnectionsAreReadOnly() throws {
        try withItemDatabase { database, _ throws in
            let error = #expect(throws: SQLiteError.self) {
                try database.read { try $0.run("INSERT INTO item(key) VALUES (1)") }
            }
            #expect(error?.code.primary == .readonly)
            #expect(try database.integrityCheck() == ["ok"])
        }
    }

    @Test func readRethrowsAndTheReaderStaysUsable() throws {
        try withItemDatabase(readerCount: 1) { database, _ throws in
            #expect(throws: DeliberateFailure.self) {
                try database.read { connection in
                    let statement = try connection.statement("SELECT 1 UNION ALL SELECT 2")
                    _ = try statement.step()         // left mid-way on purpose
                    throw DeliberateFailure(tag: 1)
                }
            }
            try database.write(insertItem(7))
            #expect(try itemKeys(database) == [7], "a new read transaction, not the abandoned snapshot")
        }
    }
}
