import Foundation
import Testing
import TandemStore
import TandemSQLite

@Suite struct SQLiteMigrationTests {
    private static let logged: [SQLiteMigration] = [
        SQLiteMigration(version: 1, sql: "CREATE TABLE log(step TEXT); INSERT INTO log VALUES ('one');"),
        SQLiteMigration(version: 2, sql: "INSERT INTO log VALUES ('two'); CREATE TABLE second(x);"),
        SQLiteMigration(version: 3, sql: "INSERT INTO log VALUES ('three');"),
    ]

    private func log(_ path: String, migrations: [SQLiteMigration]) throws -> [String] {
        let database = try SQLiteDatabase(path: path, migrations: migrations)
        defer { database.close() }
        return try database.read { try $0.query("SELECT step FROM log ORDER BY rowid") { $0.text(0) } }
    }

    private func userVersion(_ path: String) throws -> Int64? {
        try SQLiteConnection(path: path, readOnly: true).queryOne("PRAGMA user_version") { $0.int64(0) }
    }

    @Test func migrationsRunOnceInOrderAndReopeningSkipsThem() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/m.sqlite"
            #expect(try log(path, migrations: Self.logged) == ["one", "two", "three"])
            #expect(try userVersion(path) == 3)
            #expect(try log(path, migrations: Self.logged) == ["one", "two", "three"])

            let extended = Self.logged + [SQLiteMigration(version: 7, sql: "INSERT INTO log VALUES ('seven');")]
            #expect(try log(path, migrations: extended) == ["one", "two", "three", "seven"])
            #expect(try userVersion(path) == 7)
        }
    }

    @Test func fileFromANewerBuildIsRefused() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/m.sqlite"
            _ = try log(path, migrations: Self.logged)
            let error = #expect(throws: SQLiteError.self) {
                _ = try SQLiteDatabase(path: path, migrations: Array(Self.logged.prefix(2)))
            }
            #expect(error?.code == .cantopen)
            #expect(error?.message.contains("newer") == true)
            #expect(try userVersion(path) == 3, "the file is left as it was")
        }
    }

    @Test func failingMigrationRollsBackAloneAndReportsItsVersion() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/m.sqlite"
            let broken = Array(Self.logged.prefix(1)) + [
                SQLiteMigration(version: 2, sql: "CREATE TABLE second(x); INSERT INTO missing VALUES (1);"),
            ]
            let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path, migrations: broken) }
            #expect(error?.message.contains("migration 2") == true)
            #expect(try userVersion(path) == 1)
            let tables = try SQLiteConnection(path: path).query(
                "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") { $0.text(0) }
            #expect(tables == ["log"], "the half-done migration left nothing behind")

            #expect(try log(path, migrations: Self.logged) == ["one", "two", "three"], "the fixed build goes on")
        }
    }

    /// SQLite's recipe for changing a table (create, copy, drop, rename) would cascade-delete
    /// the children of a dropped parent if foreign keys were enforced during migrations.
    @Test func rebuildingAParentTableKeepsItsChildren() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/m.sqlite"
            let first = SQLiteMigration(version: 1, sql: """
                CREATE TABLE parent(id INTEGER PRIMARY KEY);
                CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER NOT NULL REFERENCES parent(id) ON DELETE CASCADE);
                """)
            do {
                let database = try SQLiteDatabase(path: path, migrations: [first])
                defer { database.close() }
                try database.write { connection in
                    try connection.execute("INSERT INTO parent VALUES (1), (2); INSERT INTO child VALUES (10, 1), (20, 2);")
                }
            }
            let rebuild = SQLiteMigration(version: 2, sql: """
                CREATE TABLE parent_new(id INTEGER PRIMARY KEY, label TEXT NOT NULL DEFAULT '');
                INSERT INTO parent_new(id) SELECT id FROM parent;
                DROP TABLE parent;
                ALTER TABLE parent_new RENAME TO parent;
                """)
            let database = try SQLiteDatabase(path: path, migrations: [first, rebuild])
            defer { database.close() }
            #expect(try database.read { try $0.query("SELECT id FROM child ORDER BY id") { $0.int64(0) } } == [10, 20])
            // Enforcement is back on for ordinary writes.
            #expect(throws: SQLiteError.self) {
                try database.write { try $0.run("INSERT INTO child VALUES (30, 99)") }
            }
        }
    }

    @Test func migrationLeavingDanglingForeignKeysIsRolledBack() throws {
        try withTemporaryDirectory { directory throws in
            let path = directory + "/m.sqlite"
            let migrations = [
                SQLiteMigration(version: 1, sql: """
                    CREATE TABLE parent(id INTEGER PRIMARY KEY);
                    CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id));
                    INSERT INTO parent VALUES (1); INSERT INTO child VALUES (10, 1);
                    """),
                SQLiteMigration(version: 2, sql: "DELETE FROM parent;"),
            ]
            let error = #expect(throws: SQLiteError.self) { _ = try SQLiteDatabase(path: path, migrations: migrations) }
            #expect(error?.code == .constraintForeignKey)
            #expect(error?.message.contains("child") == true)
            #expect(try userVersion(path) == 1)
            #expect(try SQLiteConnection(path: path).queryOne("SELECT count(*) FROM parent") { $0.int64(0) } == 1)
        }
    }
}
