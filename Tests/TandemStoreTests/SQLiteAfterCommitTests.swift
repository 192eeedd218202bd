import Synchronization
import Testing
@testable import TandemStore
@testable import TandemSQLite

/// `write(_:afterCommit:)`: the hook sees committed work only, in commit order.
@Suite struct SQLiteAfterCommitTests {
    @Test func hooksRunInCommitOrderAndOnlyForCommittedWrites() throws {
        try withItemDatabase { database, _ throws in
            let seen = Mutex<[Int]>([])
            onThreads(16) { thread in
                for index in 0..<100 {
                    let key = thread * 100 + index
                    // Every seventh write fails after inserting: its hook must never run.
                    _ = try? database.write({ connection -> Int in
                        try connection.run("INSERT INTO item(key) VALUES (?)", [.integer(Int64(key))])
                        if key % 7 == 0 { throw DeliberateFailure(tag: key) }
                        // The row's position in commit order.
                        return Int(connection.lastInsertRowID)
                    }, afterCommit: { rowID in seen.withLock { $0.append(rowID) } })
                }
            }
            let order = seen.withLock { $0 }
            #expect(order.count == 1600 - (0..<1600).filter { $0 % 7 == 0 }.count)
            #expect(order == order.sorted(), "hooks ran in commit order")
            #expect(try itemKeys(database).count == order.count)
        }
    }
}
