/// One step of the schema: SQL that takes the file from `version - 1` (or any earlier
/// applied version) to `version`.
///
/// ```swift
/// let migrations = [
///     SQLiteMigration(version: 1, sql: "CREATE TABLE zone(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);"),
///     SQLiteMigration(version: 2, sql: "ALTER TABLE zone ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;"),
/// ]
/// ```
///
/// The applied version is the file's `PRAGMA user_version`. Each migration runs in its own
/// transaction with foreign key enforcement off, so a table can be rebuilt (SQLite's
/// "twelve-step" ALTER) without cascading deletes; before commit, `PRAGMA foreign_key_check`
/// must come back empty. The SQL must not begin or end transactions itself, and must not
/// change once released: files remember versions, not SQL.
public struct SQLiteMigration: Sendable {
    /// Positive and strictly increasing along the list given to ``SQLiteDatabase``.
    public var version: Int
    /// One or more `;`-separated statements.
    public var sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}

extension SQLiteConnection {
    /// Applies the migrations the file has not seen yet, in order.
    ///
    /// Safe against another process migrating the same file at once: each step re-reads the
    /// version inside its write transaction.
    ///
    /// - Throws: `.cantopen` when the file's version is newer than the last migration (the
    ///   file was written by a newer build); the failing migration's ``SQLiteError``, with its
    ///   version in the message, after rolling that migration back.
    func migrate(_ migrations: [SQLiteMigration]) throws(SQLiteError) {
        let latest = migrations.last?.version ?? 0
        var previous = 0
        for migration in migrations {
            precondition(migration.version > previous,
                         "migration versions must be positive and strictly increasing")
            previous = migration.version
        }
        let current = try userVersion()
        try refuseNewer(current, latest: latest)
        guard current < latest else { return }

        // Foreign key enforcement cannot change inside a transaction, so switch it off around
        // all of them; foreign_key_check stands in for it before each commit.
        try execute("PRAGMA foreign_keys = OFF")
        defer { try? execute("PRAGMA foreign_keys = ON") }
        for migration in migrations where migration.version > current {
            try runRetryingBusy("BEGIN IMMEDIATE")
            do throws(SQLiteError) {
                let applied = try userVersion()
                try refuseNewer(applied, latest: latest)
                if applied < migration.version {
                    try execute(migration.sql)
                    if let table = try firstRow("PRAGMA foreign_key_check", [], { $0.text(0) }) {
                        throw SQLiteError(
                            code: .constraintForeignKey,
                            message: "the migration leaves rows of \(table) with dangling foreign keys")
                    }
                    try execute("PRAGMA user_version = \(migration.version)")
                }
                try flushWritesBeforeCommit()
                try runRetryingBusy("COMMIT")
            } catch {
                dropWritesBeforeCommit()
                if isInTransaction { try? execute("ROLLBACK") }
                throw SQLiteError(
                    code: error.code,
                    message: "migration \(migration.version) failed: \(error.message)",
                    sql: error.sql)
            }
        }
    }

    private func userVersion() throws(SQLiteError) -> Int {
        try firstRow("PRAGMA user_version") { Int($0.int64(0)) } ?? 0
    }

    private func refuseNewer(_ version: Int, latest: Int) throws(SQLiteError) {
        guard version <= latest else {
            throw SQLiteError(
                code: .cantopen,
                message: "\(path) is at schema version \(version), newer than the \(latest) this build knows; "
                    + "it was written by a newer Tandem")
        }
    }
}
