internal import TandemSQLite

extension SQLiteStore {
    /// The schema version this build creates and migrates to (`PRAGMA user_version` of a
    /// current `tandem.sqlite`; PostgreSQL's numbers are the same, decision P16).
    public static var schemaVersion: Int { Migrations.all.last?.version ?? 0 }
}
