/// One step of the PostgreSQL schema: its version and the DDL that takes a database to it.
public struct PostgresMigration: Sendable {
    /// Versions start at 1 and follow SQLite's migration of the same number (PRAGMA user_version).
    public var version: Int
    /// Statements separated by `;`, run in the migration transaction.
    public var sql: String

    public init(version: Int, sql: String) {
        self.version = version
        self.sql = sql
    }
}
