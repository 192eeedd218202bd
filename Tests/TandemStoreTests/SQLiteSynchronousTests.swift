import Foundation
import Testing
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// `synchronous` reaches the writer connection (DESIGN.md §4: `FULL` by default survives power
/// loss, `NORMAL` on request). A SIGKILL test cannot tell the two apart, only a power loss would,
/// so the setting itself is read back: `PRAGMA synchronous` is 2 for FULL and 1 for NORMAL
/// (https://www.sqlite.org/pragma.html#pragma_synchronous).
@Suite struct SQLiteSynchronousTests {
    static let cases: [(SQLiteSynchronous, Int64)] = [(.full, 2), (.normal, 1)]

    @Test("the writer connection runs with the synchronous level asked for", arguments: cases)
    func writerReadsTheLevel(_ entry: (SQLiteSynchronous, Int64)) throws {
        try withItemDatabase(synchronous: entry.0) { database, _ in
            let level = try database.write { connection in try connection.queryOne("PRAGMA synchronous") { $0.int64(0) } }
            #expect(level == entry.1, "\(entry.0)")
        }
    }

    @Test("the store passes its synchronous level to the writer; FULL unless asked", arguments: cases)
    func storeReadsTheLevel(_ entry: (SQLiteSynchronous, Int64)) throws {
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory, synchronous: entry.0, readerCount: 1)
            defer { store.close() }
            let level = try store.database.write { connection in try connection.queryOne("PRAGMA synchronous") { $0.int64(0) } }
            #expect(level == entry.1, "\(entry.0)")
        }
        try withTemporaryDirectory { directory in
            let store = try SQLiteStore(directory: directory + "/default", readerCount: 1)
            defer { store.close() }
            #expect(try store.database.write { try $0.queryOne("PRAGMA synchronous") { $0.int64(0) } } == 2)
        }
    }
}
