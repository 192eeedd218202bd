public import TandemPostgres

/// Brings a database's schema up to date: every migration newer than the database's version,
/// in order, in one transaction that holds an advisory lock, so several nodes starting at once
/// apply each migration exactly once (the others wait, then find nothing left to do).
///
/// ```swift
/// try PostgresMigrator.migrate(connection)          // PostgresMigrations.all
/// ```
///
/// Applied versions are rows of `schema_migrations(version, applied_at)`. DDL is transactional
/// in PostgreSQL, so a failing migration leaves the database as it was (decision P16).
public enum PostgresMigrator {
    /// The advisory lock key (`pg_advisory_xact_lock`): "tandem" in ASCII, a constant every node shares.
    public static let lockKey: Int64 = 0x74_61_6E_64_65_6D

    /// Applies what `migrations` has beyond the database's version and returns the versions applied.
    ///
    /// - Throws: ``PostgresError`` from a failing statement (nothing applied), or with
    ///   ``PostgresError/Kind/other`` when the database has a version newer than the newest of
    ///   `migrations` (it was migrated by a newer Tandem: refusing beats guessing). A permission
    ///   error (`42501`, as on schema `public` of a database another role owns, PostgreSQL 15's
    ///   default) says the database must be owned by the user the server connects as.
    @discardableResult
    public static func migrate(_ connection: PostgresConnection, _ migrations: [PostgresMigration] = PostgresMigrations.all) throws -> [Int] {
        precondition(zip(migrations, migrations.dropFirst()).allSatisfy { $0.version < $1.version }, "migrations out of order")
        do {
            return try apply(connection, migrations)
        } catch let error as PostgresError where error.sqlState == "42501" {
            var explained = error
            explained.message += "; the database must be owned by the user tandem connects as "
                + "(createdb -O USER DB, or ALTER DATABASE DB OWNER TO USER and ALTER SCHEMA public OWNER TO USER)"
            explained.sql = nil
            throw explained
        }
    }

    private static func apply(_ connection: PostgresConnection, _ migrations: [PostgresMigration]) throws -> [Int] {
        try connection.transaction(.readCommitted) { connection in
            try connection.run("SELECT pg_advisory_xact_lock($1::bigint)", [.integer(lockKey)])
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version BIGINT PRIMARY KEY,
                    applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
                )
                """)
            let current = try connection.queryOne("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") { try $0.int64(0) } ?? 0
            if let newest = migrations.last?.version, current > newest {
                throw PostgresError(kind: .other, message: "the database is at schema version \(current), newer than this build's \(newest)")
            }
            var applied: [Int] = []
            for migration in migrations where migration.version > current {
                try connection.execute(migration.sql)
                try connection.run("INSERT INTO schema_migrations (version) VALUES ($1)", [.integer(Int64(migration.version))])
                applied.append(migration.version)
            }
            return applied
        }
    }
}
