public import TandemPostgres
public import TandemStore

/// The store on PostgreSQL (issue 19): every node of a cluster opens the same database, and
/// assets and avatars live in a directory every node mounts (decisions P20).
///
/// ```swift
/// let store = try PostgresStore(url: "postgres://tandem@db/tandem",
///                               options: .init(directory: "/srv/tandem"))
/// let zone = try store.read { try $0.zone(scope, name: "notes") }
/// ```
///
/// `read` runs in a `REPEATABLE READ READ ONLY` transaction (one snapshot for the whole body);
/// `write` in a `SERIALIZABLE` one, so every committed write has the outcome it would have had
/// alone (P3). This process's writes queue and are committed in groups, each in its own
/// savepoint (P53); a write that loses a race with another node's fails as
/// ``StoreError/Kind/retryable`` and is not run again here (P21). PostgreSQL's errors leave
/// `read`, `write` and `init` as ``StoreError`` (P2, P22).
public final class PostgresStore: Store {
    /// How the PostgreSQL store is opened.
    public struct Options: Sendable {
        /// The folder holding `assets/` and `avatars/` (created if missing, mode 0700): on a
        /// cluster, one every node mounts.
        public var directory: String
        /// Most connections this process opens, at least 1: also how many reads run at once
        /// (one write transaction at a time, P53).
        public var poolSize: Int
        /// Each statement's limit (`statement_timeout`); nil leaves the server's setting.
        public var statementTimeout: Duration?

        public init(directory: String, poolSize: Int = 16, statementTimeout: Duration? = .seconds(30)) {
            self.directory = directory
            self.poolSize = poolSize
            self.statementTimeout = statementTimeout
        }
    }

    public let pool: PostgresPool
    public let assets: AssetFiles
    public let avatars: AssetFiles
    public let options: Options
    /// The database's URL without its password (``PostgresURL/redacted(_:)``), for logs and hints.
    public let location: String
    /// This process's writes, committed in groups (P53).
    private let writeQueue = PostgresWriteQueue()
    /// A transaction of this store never waits on anything but the database between statements;
    /// one left idle this long belongs to a stalled process (a paused VM, SIGSTOP), and the
    /// server ends it, so the cluster's write turn it holds (N62) comes free (N66).
    public static let idleInTransactionTimeout: Duration = .seconds(5)

    /// Connects, brings the schema up to date (``PostgresMigrator``) and prepares the asset folders.
    ///
    /// - Throws: ``StoreError`` `unavailable` when the database cannot be reached, `internal`
    ///   when it cannot be migrated (or is newer than this build); ``DataDirectory/UnsafeError``
    ///   for a directory others can write to.
    public init(url: String, options: Options) throws {
        self.options = options
        location = PostgresURL.redacted(url)
        let pool = PostgresPool(url: url, size: options.poolSize, statementTimeout: options.statementTimeout,
                                idleInTransactionTimeout: Self.idleInTransactionTimeout)
        self.pool = pool
        do {
            try Self.mapping { try pool.withConnection { try PostgresMigrator.migrate($0) } }
        } catch {
            pool.close()
            throw error
        }
        try DataDirectory.prepare(options.directory)
        assets = try AssetFiles(directory: options.directory + "/assets")
        avatars = try AssetFiles(directory: options.directory + "/avatars")
    }

    public var summary: String { "postgres, pool=\(options.poolSize), isolation=SERIALIZABLE, \(location)" }

    public func read<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try Self.mapping {
            // A read whose first statement meets a dead pooled connection runs again once (P68).
            try pool.read(.repeatableReadOnly) { connection in
                try body(PostgresStoreTransaction(connection))
            }
        }
    }

    public func readSingleStatement<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try Self.mapping {
            // Without BEGIN and COMMIT; run again as a `read` when it needs a second statement (P72).
            try pool.readSingleStatement { connection in
                try body(PostgresStoreTransaction(connection))
            }
        }
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T) throws -> T {
        try write(body, afterCommit: { _ in })
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T,
                                   afterCommit: @escaping @Sendable (T) -> Void) throws -> T {
        // Hooks run in commit order: the batch's leader runs them before the next batch begins (P3, P53).
        let job = TypedPostgresWriteJob(body, afterCommit: afterCommit)
        let pool = pool
        try writeQueue.perform(job) { batch in PostgresGroupCommit.commit(batch, pool: pool) }
        return try Self.mapping { try job.result() }
    }

    public func close() { pool.close() }

    /// Runs `body`, turning a ``PostgresError`` it throws into a ``StoreError``; other errors pass.
    static func mapping<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError {
            throw StoreError(error)
        }
    }
}
