import Foundation
import Synchronization
import Testing
import TandemStore
import TandemSQLite

@Suite struct SQLiteDatabaseLifecycleTests {
    @Test func closeIsIdempotentAndLaterCallsThrow() throws {
        try withItemDatabase { database, _ throws in
            try database.write(insertItem(1))
            database.close()
            database.close()
            let writeError = #expect(throws: SQLiteError.self) { try database.write(insertItem(2)) }
            #expect(writeError?.code == .misuse)
            let readError = #expect(throws: SQLiteError.self) { try itemKeys(database) }
            #expect(readError?.code == .misuse)
            #expect(throws: SQLiteError.self) { try database.integrityCheck() }
        }
    }

    /// Every write that returned is in the file; every write refused by close left nothing.
    @Test func closeWaitsForQueuedWritesAndCheckpoints() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/close.sqlite"
            let database = try SQLiteDatabase(path: path, migrations: itemMigrations)
            let acknowledged = Outcomes<Bool>()
            let started = Atomic<Int>(0)
            let writers = onThread {
                onThreads(16) { thread in
                    for index in 0..<200 {
                        started.add(1, ordering: .relaxed)
                        let key = thread * 200 + index
                        acknowledged.record(key, (try? database.write(insertItem(key))) != nil)
                    }
                }
            }
            #expect(eventually { started.load(ordering: .relaxed) > 400 })
            database.close()
            writers.wait()

            let expected = acknowledged.all.filter(\.value).map(\.key).sorted()
            #expect(!expected.isEmpty)
            #expect(expected.count < 16 * 200, "close cut some writes off")
            let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            #expect(walSize == 0, "the WAL was checkpointed into the file")

            let reopened = try SQLiteDatabase(path: path, migrations: itemMigrations)
            defer { reopened.close() }
            #expect(try itemKeys(reopened) == expected)
        }
    }

    /// The admin CLI opens the server's file while the server runs.
    @Test func secondDatabaseOnTheSameFileWritesWhileTheFirstIsOpen() throws {
        try withItemDatabase(synchronous: .full) { first, path throws in
            try first.write(insertItem(1))
            let second = try SQLiteDatabase(path: path, readerCount: 1, migrations: itemMigrations)
            defer { second.close() }
            try second.write(insertItem(2))
            #expect(try itemKeys(first) == [1, 2])

            // Both writers at once: they take turns through SQLite's file lock.
            let failures = Outcomes<String>()
            onThreads(8) { thread in
                let database = thread.isMultiple(of: 2) ? first : second
                for index in 0..<50 {
                    let key = 100 + thread * 50 + index
                    do { try database.write(insertItem(key)) } catch { failures.record(key, "\(error)") }
                }
            }
            #expect(failures.all.isEmpty)
            #expect(try itemKeys(second) == [1, 2] + Array(100..<500))
            #expect(try first.integrityCheck() == ["ok"])
        }
    }
}
