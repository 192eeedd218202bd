import Foundation
import TandemCore
public import TandemSQLite
public import TandemStore

/// The embedded store: one SQLite file (`tandem.sqlite`) and `assets/` and `avatars/` folders inside the data
/// directory. WAL mode; `synchronous=FULL` by default (an acknowledged write survives power
/// loss), `NORMAL` on request (DESIGN.md §4).
///
/// One writer thread commits every write (group commit), so writes are serializable and hooks
/// run in commit order across all writers: more than `Store` promises (decisions P3). SQLite's
/// errors leave `read`, `write` and `init` as ``StoreError`` (P2; ``StoreError/init(_:)``).
public final class SQLiteStore: Store {
    /// How the SQLite store is opened: its own settings, which no other backend has.
    public struct Options: Sendable {
        /// Durability of each commit; `.full` survives power loss (`--synchronous`).
        public var synchronous: SQLiteSynchronous
        /// Read connections in the pool, at least 1: also how many reads run at once.
        public var readerCount: Int
        /// A cap on `tandem.sqlite` in bytes (`--max-database-mib`): past it writes fail with
        /// ``StoreError/Kind/full``, exactly as when the disk is full. Nil: the disk's size.
        public var maximumDatabaseBytes: Int?

        public init(synchronous: SQLiteSynchronous = .full, readerCount: Int = 4, maximumDatabaseBytes: Int? = nil) {
            self.synchronous = synchronous
            self.readerCount = readerCount
            self.maximumDatabaseBytes = maximumDatabaseBytes
        }
    }

    public let database: SQLiteDatabase
    public let assets: AssetFiles
    public let avatars: AssetFiles
    public let path: String
    public let options: Options

    /// Opens or creates the store in `directory` (created if missing, mode 0700; the database
    /// files are 0600: ``DataDirectory``).
    /// - Throws: ``StoreError`` when the file cannot be opened (`unavailable`), is locked by
    ///   another process's migration (`retryable`) or cannot be migrated;
    ///   ``DataDirectory/UnsafeError`` for a directory others can write to; `CocoaError` when
    ///   the directory cannot be created.
    public init(directory: String, options: Options = Options()) throws {
        try DataDirectory.prepare(directory)
        let path = directory + "/tandem.sqlite"
        self.path = path
        self.options = options
        database = try Self.mapping {
            try SQLiteDatabase(path: path, synchronous: options.synchronous, readerCount: options.readerCount,
                               migrations: Migrations.all, maximumBytes: options.maximumDatabaseBytes)
        }
        // SQLite makes its -wal and -shm files with the database file's mode from now on.
        DataDirectory.restrict([path, path + "-wal", path + "-shm"])
        assets = try AssetFiles(directory: directory + "/assets")
        avatars = try AssetFiles(directory: directory + "/avatars")
    }

    /// `init(directory:options:)` with the options spelled out.
    public convenience init(directory: String, synchronous: SQLiteSynchronous = .full, readerCount: Int = 4,
                            maximumDatabaseBytes: Int? = nil) throws {
        try self.init(directory: directory, options: Options(synchronous: synchronous, readerCount: readerCount,
                                                             maximumDatabaseBytes: maximumDatabaseBytes))
    }

    public var summary: String { "sqlite, synchronous=\(options.synchronous.rawValue), \(path)" }

    public func read<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try Self.mapping { try database.read { connection in try body(SQLiteStoreTransaction(connection)) } }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T) throws -> T {
        try Self.mapping { try database.write { connection in try body(SQLiteStoreTransaction(connection)) } }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        try Self.mapping {
            try database.write({ connection in try body(SQLiteStoreTransaction(connection)) }, afterCommit: afterCommit)
        }
    }

    public func close() { database.close() }

    /// Runs `body`, turning an `SQLiteError` it throws into a ``StoreError``; other errors pass.
    private static func mapping<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw StoreError(error)
        }
    }
}

extension StoreError {
    /// SQLite's error as the store-level error (decisions P2): `BUSY` is retryable (after a
    /// second), `CONSTRAINT` a conflict, `CANTOPEN` unavailable, `FULL` full, text holding U+0000
    /// refused by the connection invalid text (P62), the rest internal.
    public init(_ error: SQLiteError) {
        if error.isTextWithNUL {
            self.init(.invalidText, error.description)
            return
        }
        switch error.code.primary {
        case .busy: self.init(.retryable, error.description, retryAfterSeconds: 1)
        case .constraint: self.init(.conflict, error.description)
        case .cantopen: self.init(.unavailable, error.description, retryAfterSeconds: 5)
        case .full: self.init(.full, error.description)
        default: self.init(.internal, error.description)
        }
    }
}

/// The reading and writing primitives over one SQLite connection.
struct SQLiteStoreTransaction: StoreWriting {
    let db: SQLiteConnection
    /// What this transaction logged in the change feeds (`loggedChanges`).
    let changeLog = TransactionChangeLog()

    /// Text holding U+0000 is refused here as PostgreSQL refuses it (P62), except where
    /// STRING field values are indexed and compared (`allowingTextWithNUL`).
    init(_ connection: SQLiteConnection) {
        connection.refusesTextWithNUL = true
        db = connection
    }
}

extension SQLiteStoreTransaction {
    func savepoint<T>(_ body: () throws -> T) throws -> T {
        try db.run("SAVEPOINT item")
        let logged = changeLog.count
        let deferred = db.writesBeforeCommitMark
        do {
            let result = try body()
            try db.run("RELEASE item")
            return result
        } catch {
            try? db.run("ROLLBACK TO item")
            try? db.run("RELEASE item")
            changeLog.truncate(to: logged)
            db.dropWritesBeforeCommit(after: deferred)
            throw error
        }
    }

    func loggedChanges() -> [LoggedChange] { changeLog.all }
}
