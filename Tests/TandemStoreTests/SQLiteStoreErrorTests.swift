import Foundation
import Testing
import TandemCore
import TandemSQLite
import TandemStore
import TandemStoreSQLite

/// SQLite's errors leave `SQLiteStore` as `StoreError` (decisions P2): what the router and
/// DiskFull decide on. The HTTP answers themselves are DiskFullTests' and the matrix tests'.
@Suite struct SQLiteStoreErrorTests {
    @Test func aLockHeldByAnotherProcessIsRetryableAfterASecond() throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
            defer { store.close() }
            // Another connection (as another process would) holds the write lock past the busy timeout.
            let other = try SQLiteConnection(path: directory + "/tandem.sqlite")
            defer { other.close() }
            try other.execute("BEGIN IMMEDIATE")
            let error = try #require(throws: StoreError.self) {
                try store.write { tx in _ = try tx.createContainer("iCloud.busy", at: 1) }
            }
            #expect(error.kind == .retryable)
            #expect(error.retryAfterSeconds == 1)
            try other.execute("ROLLBACK")
            #expect(try store.write { tx in try tx.createContainer("iCloud.busy", at: 1) })
        }
    }

    @Test func aWritePastTheDatabaseCapIsFullAndReadsGoOn() throws {
        try withTemporaryDirectory { directory in
            try SQLiteStore(directory: directory, readerCount: 1).close()
            let size = try #require(try FileManager.default.attributesOfItem(atPath: directory + "/tandem.sqlite")[.size] as? Int)
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1, maximumDatabaseBytes: size + 256 * 1024)
            defer { store.close() }
            let fixture = try Fixture.make(store)
            let big = String(repeating: "x", count: 64 * 1024)
            var refusal: StoreError?
            for index in 0..<64 where refusal == nil {
                do {
                    _ = try store.write { tx in try tx.save(fixture.record("big-\(index)", fields: ["body": .string(big)]), in: fixture.zone) }
                } catch let error as StoreError {
                    refusal = error
                }
            }
            #expect(refusal?.kind == .full)
            #expect(try store.read { try $0.record(zone: fixture.zone, name: "big-0") } != nil, "reads go on")
        }
    }

    @Test func aDatabaseThatCannotBeOpenedIsUnavailable() throws {
        try withTemporaryDirectory { directory in
            // A directory where the database file should be: SQLite cannot open it.
            try FileManager.default.createDirectory(atPath: directory + "/tandem.sqlite", withIntermediateDirectories: false)
            let error = try #require(throws: StoreError.self) { try SQLiteStore(directory: directory, readerCount: 1) }
            #expect(error.kind == .unavailable)
        }
    }
}
