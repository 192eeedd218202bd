import TandemCore

/// An SQLite database file for a server: one writer with group commit, a pool of readers.
///
/// ```swift
/// let database = try SQLiteDatabase(path: dataDirectory + "/tandem.sqlite", migrations: StoreSchema.migrations)
/// let zoneID = try database.write { connection in
///     try connection.run("INSERT INTO zone(name) VALUES (?)", [.text("_defaultZone")])
///     return connection.lastInsertRowID
/// }
/// let names = try database.read { try $0.query("SELECT name FROM zone") { $0.text(0) } }
/// ```
///
/// The file is in WAL mode, so readers never wait for the writer and see the last committed
/// state. Other processes (the `tandem` admin commands) may open the same file at the same
/// time: writers take turns through SQLite's lock, waiting up to
/// ``SQLiteConnection/busyTimeout``. A `:memory:` path does not work: every connection would
/// get its own empty database.
///
/// DESIGN.md §4: WAL, `synchronous=FULL` by default, one writer fed by a queue, a reader pool,
/// foreign keys on, statements prepared once.
public final class SQLiteDatabase: Sendable {
    /// The database file.
    public let path: String
    /// The durability level commits are made at.
    public let synchronous: SQLiteSynchronous

    let writer: SQLiteWriter
    private let readers: SQLiteReaderPool
    private let isClosed = Locked(false)

    /// Opens the file (creating it), brings its schema up to date, and starts the writer.
    ///
    /// Migrations the file has not seen run in order, each in its own transaction (see
    /// ``SQLiteMigration``); a file already up to date runs none.
    ///
    /// - Parameters:
    ///   - synchronous: durability of each commit; `.full` survives power loss.
    ///   - readerCount: read-only connections in the pool, at least 1; also the number of
    ///     reads that run at once.
    ///   - migrations: the whole schema history, versions positive and strictly increasing.
    ///   - maximumBytes: a cap on the database file (SQLite's `max_page_count` on the writer);
    ///     a write that would pass it fails with `.full`, as on a full disk. Nil: no cap.
    /// - Throws: ``SQLiteError``: `.cantopen` for a file that cannot be opened, cannot use WAL,
    ///   or is at a schema version newer than the last migration; a failing migration's error
    ///   (that migration rolled back, earlier ones kept).
    public init(
        path: String,
        synchronous: SQLiteSynchronous = .full,
        readerCount: Int = 4,
        migrations: [SQLiteMigration],
        maximumBytes: Int? = nil
    ) throws(SQLiteError) {
        precondition(readerCount >= 1, "an SQLiteDatabase needs at least one reader connection")
        let writerConnection = try SQLiteConnection(path: path)
        // WAL is remembered by the file; asking again is a no-op.
        let mode = try writerConnection.firstRow("PRAGMA journal_mode = WAL") { $0.text(0) }
        guard mode?.lowercased() == "wal" else {
            throw SQLiteError(code: .cantopen,
                              message: "\(path) cannot use WAL mode (journal mode is \(mode ?? "unknown"))")
        }
        try writerConnection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        // Statement journals and temporary tables in memory: with each job in its own
        // SAVEPOINT, SQLite spilled a batch's statement journal to a temporary file (opened and
        // unlinked about once a batch), and out of descriptors the write failed "unable to open
        // database file" (decisions E35). What a journal holds is bounded by one batch's pages.
        try writerConnection.execute("PRAGMA temp_store = MEMORY")
        try writerConnection.migrate(migrations)
        if let maximumBytes {
            let pageSize = try writerConnection.firstRow("PRAGMA page_size") { $0.int64(0) } ?? 4096
            try writerConnection.execute("PRAGMA max_page_count = \(max(1, Int64(maximumBytes) / pageSize))")
        }
        self.path = path
        self.synchronous = synchronous
        self.readers = try SQLiteReaderPool(path: path, count: readerCount)
        self.writer = SQLiteWriter(connection: writerConnection)
    }

    deinit { close() }

    /// Runs `body` on a reader connection inside a read transaction, and returns its result.
    ///
    /// Every statement of `body` sees the same snapshot: the database as last committed when
    /// its first statement ran, unaffected by commits made since. Blocks while all readers
    /// are lent out. The connection is read-only (writes fail with `.readonly`) and must not
    /// escape `body`. Do not call `read` from inside `body`: with every reader held by an
    /// outer `read`, the inner one would wait forever.
    ///
    /// - Throws: whatever `body` throws; ``SQLiteError`` `.misuse` once closed.
    public func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try readers.withConnection { connection in
            try connection.run("BEGIN DEFERRED")
            do {
                let value = try body(connection)
                // A read writes nothing, so nothing waits for its commit (E26).
                connection.dropWritesBeforeCommit()
                connection.resetActiveStatements()
                try connection.run("COMMIT")
                return value
            } catch {
                connection.resetActiveStatements()
                if connection.isInTransaction { try? connection.run("ROLLBACK") }
                throw error
            }
        }
    }

    /// Runs `body` on the writer thread inside a transaction, blocks until that transaction
    /// is committed (durable at ``synchronous``), and returns `body`'s result.
    ///
    /// Concurrent writes are committed together (group commit), but each is isolated: if
    /// `body` throws, its writes are rolled back and the error is rethrown here, while other
    /// writes of the same commit still succeed. A write that leaves a deferred foreign key
    /// unresolved fails the same way (`.constraintForeignKey`). When the commit itself fails
    /// (disk full, I/O error), every write in it gets that error and none of them took effect.
    ///
    /// `body` runs on the writer thread and must stay short: every write waits behind it.
    /// It must not begin, commit or roll back the transaction (savepoints are fine); must not
    /// call `write` (a precondition: it would wait for itself) nor `read` (the reader it needs
    /// may be held by a caller waiting for this very write); and should not catch an SQLite
    /// error and carry on writing, since after an I/O error SQLite may have abandoned the
    /// transaction. Connection settings it changes (pragmas, temporary tables) outlive it.
    ///
    /// - Throws: `body`'s error; the commit's ``SQLiteError``; `.misuse` once closed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) throws -> T {
        try writer.perform(body)
    }

    /// Like `write(_:)`, and once the transaction committed, runs `afterCommit` with the body's
    /// result on the writer thread, in commit order, before the caller wakes. `afterCommit` must
    /// be quick and must not block (hand the result to a queue); it never runs for a body that
    /// threw or a transaction that failed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        try writer.perform(body, afterCommit: afterCommit)
    }

    /// Waits for queued writes, checkpoints the WAL into the file, and closes every
    /// connection. Idempotent; afterwards `read` and `write` throw `.misuse`.
    ///
    /// Reads in progress finish first. The checkpoint is partial if another process is
    /// reading at that moment, and the file stays correct either way.
    public func close() {
        isClosed.withLock { isClosed in
            guard !isClosed else { return }
            isClosed = true
            // Readers first, so that the writer's final checkpoint does not wait for them.
            readers.close()
            writer.close()
        }
    }

    /// The result of `PRAGMA integrity_check`: `["ok"]` for a sound file, else one line per
    /// problem found (at most 100).
    public func integrityCheck() throws -> [String] {
        try read { try $0.query("PRAGMA integrity_check") { $0.text(0) } }
    }
}
