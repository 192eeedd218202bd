import Foundation
import Synchronization
import Testing
import TandemPostgres
import TandemSQLite
import TandemStorePostgres
import TandemTestSupport

@Suite struct PostgresMigrationTests {
    private func freshConnection() throws -> PostgresConnection {
        try PostgresConnection(url: try PostgresCluster.shared().createDatabase())
    }

    @Test func appliesEveryMigrationOnceThenNothing() throws {
        let connection = try freshConnection()
        let all = PostgresMigrations.all.map(\.version)
        // Strictly increasing from 1; a gap is allowed (parts reserve numbers: 19 lands before 18).
        #expect(all.first == 1 && zip(all, all.dropFirst()).allSatisfy { $0 < $1 })
        #expect(try PostgresMigrator.migrate(connection) == all)
        #expect(try PostgresMigrator.migrate(connection) == [])
        let recorded = try connection.query("SELECT version FROM schema_migrations ORDER BY version") { Int(try $0.int64(0)) }
        #expect(recorded == all)
    }

    /// Nodes starting at once: the advisory lock lets one apply, the others find nothing to do.
    @Test func concurrentMigratorsApplyEachVersionOnce() throws {
        let url = try PostgresCluster.shared().createDatabase()
        let applied = Mutex<[Int]>([])
        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                do {
                    let versions = try PostgresMigrator.migrate(try PostgresConnection(url: url))
                    applied.withLock { $0 += versions }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
        #expect(applied.withLock { $0.sorted() } == PostgresMigrations.all.map(\.version))
    }

    @Test func failingMigrationLeavesTheDatabaseAsItWas() throws {
        let connection = try freshConnection()
        let broken = [PostgresMigration(version: 1, sql: "CREATE TABLE kept (n bigint)"),
                      PostgresMigration(version: 2, sql: "CREATE TABLE lost (n bigint); SELECT no_such_function()")]
        #expect(throws: PostgresError.self) { try PostgresMigrator.migrate(connection, broken) }
        let tables = try connection.query("SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'") { try $0.string(0) }
        #expect(tables == [])
    }

    @Test func refusesADatabaseFromANewerBuild() throws {
        let connection = try freshConnection()
        try PostgresMigrator.migrate(connection)
        do {
            try PostgresMigrator.migrate(connection, Array(PostgresMigrations.all.prefix(3)))
            Issue.record("migrated down")
        } catch let error as PostgresError {
            #expect(error.message.contains("newer"))
        }
    }

    /// Every table, column and named index of a fresh SQLite store (as `tandem container create`
    /// makes it) has its PostgreSQL counterpart, with the translated type.
    @Test func schemaMatchesSQLite() throws {
        let sqlite = try SQLiteSchema.fresh()
        let connection = try freshConnection()
        try PostgresMigrator.migrate(connection)
        let postgres = try PostgresSchema(connection)
        #expect(sqlite.columns.count > 40 && sqlite.indexes.count > 40, "the SQLite schema was not read")

        #expect(Set(sqlite.columns.keys).subtracting(postgres.columns.keys).sorted() == [])
        #expect(Set(postgres.columns.keys).subtracting(sqlite.columns.keys).sorted() == ["schema_migrations"])
        for (table, columns) in sqlite.columns.sorted(by: { $0.key < $1.key }) {
            var expected: [String: String] = [:]
            for (name, type) in columns {
                for (mappedName, mappedType) in SQLiteSchema.translate(table: table, column: name, type: type) {
                    expected[mappedName] = mappedType
                }
            }
            #expect(postgres.columns[table] == expected, "table \(table)")
        }
        #expect(sqlite.indexes.subtracting(postgres.indexes).sorted() == [])
    }

    /// SQLite's NOCASE columns: unique and compared through `tandem_fold`, which folds ASCII
    /// letters only (P79), as NOCASE does.
    @Test func nocaseColumnsCompareIgnoringASCIICaseOnly() throws {
        let connection = try freshConnection()
        try PostgresMigrator.migrate(connection)
        try connection.run("INSERT INTO users (record_name, email, created_at) VALUES ('_a', 'Ann@Example.com', 0)")
        do {
            try connection.run("INSERT INTO users (record_name, email, created_at) VALUES ('_b', 'ann@example.COM', 0)")
            Issue.record("the same email in another case was accepted")
        } catch {
            #expect(error.kind == .conflict)
        }
        #expect(try connection.queryOne("SELECT record_name FROM users WHERE tandem_fold(email) = tandem_fold($1)", ["ANN@EXAMPLE.COM"]) {
            try $0.string(0)
        } == "_a")
        // Other letters' case, full-width forms and zero-width characters are other addresses.
        for other in ["\u{C5}nn@example.com", "\u{FF41}nn@example.com", "a\u{200B}nn@example.com"] {
            try connection.run("INSERT INTO users (record_name, email, created_at) VALUES ($1, $2, 0)", [.text("_" + other), .text(other)])
        }
        #expect(try connection.queryOne("SELECT count(*) FROM users WHERE tandem_fold(email) = tandem_fold($1)", ["ann@EXAMPLE.com"]) {
            try $0.int64(0)
        } == 1)
        // The lookup uses the unique index.
        let plan = try connection.query("EXPLAIN SELECT record_name FROM users WHERE tandem_fold(email) = tandem_fold('x')") { try $0.string(0) }
        #expect(plan.joined().contains("users_email_key"), "\(plan)")
        // Identity columns fill in ids as SQLite's rowid does.
        #expect(try connection.queryOne("SELECT id FROM users WHERE record_name = '_a'") { try $0.int64(0) } == 1)
    }

    @Test func searchBodyIsATsvectorWithWholeTokens() throws {
        let connection = try freshConnection()
        try PostgresMigrator.migrate(connection)
        try connection.execute("""
            INSERT INTO containers VALUES ('c', 0);
            INSERT INTO zones (container_id, environment, database, owner, name, created_at) VALUES ('c', 'development', 'private', '_o', 'z', 0);
            INSERT INTO records (zone_id, name, type, change_tag, change_seq, fields, created_at, created_by, modified_at, modified_by)
                VALUES (1, 'r', 'Note', 't', 1, ''::bytea, 0, '_o', 0, '_o');
            """)
        try connection.run("INSERT INTO field_search (record_id, body) VALUES (1, array_to_tsvector($1::text[]))", ["{a1:hello,b2:world}"])
        let found = try connection.query("SELECT record_id FROM field_search WHERE body @@ $1::tsquery", ["a1\\:hello"]) { try $0.int64(0) }
        #expect(found == [1])
        #expect(try connection.query("SELECT record_id FROM field_search WHERE body @@ $1::tsquery", ["a1\\:world"]) { try $0.int64(0) } == [])
        try connection.run("DELETE FROM records")
        #expect(try connection.queryOne("SELECT count(*) FROM field_search") { try $0.int64(0) } == 0)
    }
}
