internal import TandemSQLite

/// The local store's SQLite schema (PRAGMA user_version), separate from the server's.
enum LocalStoreSchema {
    static let migrations: [SQLiteMigration] = [
        SQLiteMigration(version: 1, sql: """
            -- Every record of the private and shared databases the device knows, with local edits
            -- applied. changed_keys is NULL when the row equals the server's record, else the JSON
            -- array of keys edited here and not yet sent; edit counts local edits (sends compare it).
            CREATE TABLE record (
                scope TEXT NOT NULL,
                zone_name TEXT NOT NULL,
                owner_name TEXT NOT NULL,
                record_name TEXT NOT NULL,
                record_type TEXT NOT NULL,
                body TEXT NOT NULL,
                changed_keys TEXT,
                parent_changed INTEGER NOT NULL DEFAULT 0,
                edit INTEGER NOT NULL DEFAULT 0,
                PRIMARY KEY (scope, zone_name, owner_name, record_name)
            ) WITHOUT ROWID;
            CREATE INDEX record_by_type ON record (record_type, scope);
            -- Records deleted here and not yet deleted on the server.
            CREATE TABLE tombstone (
                scope TEXT NOT NULL,
                zone_name TEXT NOT NULL,
                owner_name TEXT NOT NULL,
                record_name TEXT NOT NULL,
                PRIMARY KEY (scope, zone_name, owner_name, record_name)
            ) WITHOUT ROWID;
            -- Zones the device knows (fetched, or created here).
            CREATE TABLE zone (
                scope TEXT NOT NULL,
                zone_name TEXT NOT NULL,
                owner_name TEXT NOT NULL,
                PRIMARY KEY (scope, zone_name, owner_name)
            ) WITHOUT ROWID;
            -- Each sync engine's last State.Serialization (JSON).
            CREATE TABLE engine_state (
                scope TEXT PRIMARY KEY,
                state TEXT NOT NULL
            ) WITHOUT ROWID;
            """),
        // A tombstone keeps the row it removed, so saving the record again changes only the keys
        // the app changed (K24). changed_keys in both tables is now a JSON object: each unsent key
        // with the generation of the edit that last changed it (an array still reads, K23);
        // record.parent_changed holds the parent's generation (0: unchanged).
        SQLiteMigration(version: 2, sql: """
            ALTER TABLE tombstone ADD COLUMN body TEXT;
            ALTER TABLE tombstone ADD COLUMN changed_keys TEXT;
            ALTER TABLE tombstone ADD COLUMN edit INTEGER NOT NULL DEFAULT 0;
            """),
        // A create sent without an answer may be on the server (and deleted there since):
        // unconfirmed is 1 from its send until an answer or a fetch gives the row a change tag,
        // 2 while a listing of its zone from the start runs; a finished listing without the
        // record means it was deleted (K32 (d)).
        SQLiteMigration(version: 3, sql: """
            ALTER TABLE record ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE tombstone ADD COLUMN unconfirmed INTEGER NOT NULL DEFAULT 0;
            """),
    ]
}
