import Dispatch
import Foundation
import Synchronization
import Testing
import TandemStore
@testable import TandemSQLite

/// A fresh directory under the system's temporary directory, removed when `body` returns.
func withTemporaryDirectory<T>(_ body: (String) throws -> T) throws -> T {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("tandem-sqlite-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    return try body(directory.path)
}

/// An `SQLiteDatabase` on a temporary file holding `CREATE TABLE item(…)`, closed afterwards.
func withItemDatabase<T>(
    synchronous: SQLiteSynchronous = .normal,
    readerCount: Int = 4,
    _ body: (SQLiteDatabase, String) throws -> T
) throws -> T {
    try withTemporaryDirectory { directory in
        let path = directory + "/test.sqlite"
        let database = try SQLiteDatabase(
            path: path, synchronous: synchronous, readerCount: readerCount, migrations: itemMigrations)
        defer { database.close() }
        return try body(database, path)
    }
}

/// A table of items with a unique key and an optional deferred reference to another item.
let itemMigrations = [
    SQLiteMigration(version: 1, sql: """
        CREATE TABLE item(
            id INTEGER PRIMARY KEY,
            key INTEGER NOT NULL UNIQUE,
            parent INTEGER REFERENCES item(key) DEFERRABLE INITIALLY DEFERRED
        );
        """),
]

func insertItem(_ key: Int, parent: Int? = nil) -> @Sendable (SQLiteConnection) throws -> Void {
    { connection in
        try connection.run("INSERT INTO item(key, parent) VALUES (?, ?)",
                           [.integer(Int64(key)), parent.map { .integer(Int64($0)) } ?? .null])
    }
}

func itemKeys(_ database: SQLiteDatabase) throws -> [Int] {
    try database.read { try $0.query("SELECT key FROM item ORDER BY key") { Int($0.int64(0)) } }
}

/// Runs `body(0..<count)`, each call on its own thread, and returns when all have returned.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for index in 0..<count {
        group.enter()
        Thread {
            body(index)
            group.leave()
        }.start()
    }
    group.wait()
}

/// Starts `body` on a thread of its own; the returned group is left when it returns.
func onThread(_ body: @escaping @Sendable () -> Void) -> DispatchGroup {
    let group = DispatchGroup()
    group.enter()
    Thread {
        body()
        group.leave()
    }.start()
    return group
}

/// Polls `condition` until it holds or `timeout` passes; whether it held.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.001)
    }
    return condition()
}

/// Errors thrown on purpose by test write bodies.
struct DeliberateFailure: Error, Equatable {
    var tag: Int
}

/// Outcomes collected from many threads.
final class Outcomes<Value: Sendable>: Sendable {
    private let values = Mutex<[Int: Value]>([:])

    func record(_ index: Int, _ value: Value) {
        values.withLock { $0[index] = value }
    }

    var all: [Int: Value] { values.withLock { $0 } }
}

/// Holds the writer inside a transaction of its own while `jobs` queue up behind it, so
/// that they all land in the next transaction; then lets it go.
func runInOneBatch(
    _ database: SQLiteDatabase, _ jobs: [@Sendable (SQLiteConnection) throws -> Void]
) throws -> [Int: Result<Void, any Error>] {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let gate = onThread {
        _ = try? database.write { _ in
            entered.signal()
            release.wait()
        }
    }
    entered.wait()
    let before = database.writer.counts
    let outcomes = Outcomes<Result<Void, any Error>>()
    var callers: [DispatchGroup] = []
    do {
        // Whatever happens, let the writer go: a failed test must not hang in close().
        defer {
            release.signal()
            gate.wait()
            for caller in callers { caller.wait() }
        }
        for (index, job) in jobs.enumerated() {
            callers.append(onThread { outcomes.record(index, Result { try database.write(job) }) })
            // One at a time, so the batch holds the jobs in the order given.
            try #require(eventually { database.writer.pendingJobCount == index + 1 })
        }
    }
    let after = database.writer.counts
    #expect(after.transactions - before.transactions == 2, "the gate's transaction, then one batch")
    return outcomes.all
}
