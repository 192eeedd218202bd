import Foundation
import TandemCore
public import TandemSQLite

/// The embedded store: one SQLite file (`tandem.sqlite`) and `assets/` and `avatars/` folders inside the data
/// directory. WAL mode; `synchronous=FULL` by default (an acknowledged write survives power
/// loss), `NORMAL` on request (DESIGN.md §4).
public final class SQLiteStore: Store {
    public let database: SQLiteDatabase
    public let assets: AssetFiles
    public let avatars: AssetFiles
    public let path: String

    /// Opens or creates the store in `directory` (created if missing, mode 0700; the database
    /// files are 0600: ``DataDirectory``).
    /// - Throws: `SQLiteError` when the file cannot be opened or migrated;
    ///   ``DataDirectory/UnsafeError`` for a directory others can write to; `CocoaError` when
    ///   the directory cannot be created.
    ///
    /// `maximumDatabaseBytes` caps `tandem.sqlite`: past it writes fail with SQLite's `.full`,
    /// exactly as when the disk is full.
    public init(directory: String, synchronous: SQLiteSynchronous = .full, readerCount: Int = 4,
                maximumDatabaseBytes: Int? = nil) throws {
        try DataDirectory.prepare(directory)
        path = directory + "/tandem.sqlite"
        database = try SQLiteDatabase(path: path, synchronous: synchronous, readerCount: readerCount, migrations: Migrations.all,
                                      maximumBytes: maximumDatabaseBytes)
        // SQLite makes its -wal and -shm files with the database file's mode from now on.
        DataDirectory.restrict([path, path + "-wal", path + "-shm"])
        assets = try AssetFiles(directory: directory + "/assets")
        avatars = try AssetFiles(directory: directory + "/avatars")
    }

    public func read<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try database.read { connection in try body(SQLiteStoreTransaction(connection)) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T) throws -> T {
        try database.write { connection in try body(SQLiteStoreTransaction(connection)) }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        try database.write({ connection in try body(SQLiteStoreTransaction(connection)) }, afterCommit: afterCommit)
    }

    public func close() { database.close() }
}

/// The reading and writing primitives over one SQLite connection.
struct SQLiteStoreTransaction: StoreWriting {
    let db: SQLiteConnection
    /// What this transaction logged in the change feeds (`loggedChanges`).
    let changeLog = TransactionChangeLog()

    init(_ connection: SQLiteConnection) { db = connection }
}

extension SQLiteStoreTransaction {
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try db.run("SAVEPOINT item")
        let logged = changeLog.count
        do {
            let result = try body()
            try db.run("RELEASE item")
            return result
        } catch {
            try? db.run("ROLLBACK TO item")
            try? db.run("RELEASE item")
            changeLog.truncate(to: logged)
            throw error
        }
    }

    func loggedChanges() -> [LoggedChange] { changeLog.all }
}
