import Foundation
import TandemPostgres
import TandemSQLite
import TandemTestSupport

/// Tables, columns (name → declared type) and named indexes of a fresh SQLite store.
struct SQLiteSchema {
    var columns: [String: [String: String]] = [:]
    var indexes: Set<String> = []

    /// The store `tandem container create` makes, read through sqlite_master and table_info.
    static func fresh() throws -> SQLiteSchema {
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-schema")
        try TandemProcess.admin(["container", "create", "iCloud.com.example.schema", "--data", data])
        let connection = try SQLiteConnection(path: data + "/tandem.sqlite", readOnly: true)
        defer { connection.close() }
        let tables = try connection.query("SELECT name, type, sql FROM sqlite_master WHERE type IN ('table', 'index')") {
            (name: $0.text(0), type: $0.text(1), sql: $0.isNull(2) ? "" : $0.text(2))
        }
        let virtual = tables.filter { $0.sql.hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        var schema = SQLiteSchema()
        for table in tables {
            if table.type == "index" {
                if !table.name.hasPrefix("sqlite_autoindex_") { schema.indexes.insert(table.name) }
                continue
            }
            // SQLite's own tables and FTS5's shadow tables (field_search_data, …) have no counterpart.
            if table.name.hasPrefix("sqlite_") || virtual.contains(where: { table.name.hasPrefix($0 + "_") }) { continue }
            let columns = try connection.query("SELECT name, type FROM pragma_table_info(?)", [.text(table.name)]) {
                ($0.text(0), $0.text(1))
            }
            schema.columns[table.name] = Dictionary(uniqueKeysWithValues: columns)
        }
        return schema
    }

    /// A SQLite column's PostgreSQL counterparts (name → information_schema data_type), as
    /// PostgresMigrations translates them (decisions P12–P13).
    static func translate(table: String, column: String, type: String) -> [(String, String)] {
        switch (table, column) {
        case ("field_index", "value"):
            return [("value_integer", "bigint"), ("value_real", "double precision"), ("value_text", "text"), ("value_bytes", "bytea")]
        case ("field_search", "body"):
            return [("record_id", "bigint"), ("body", "tsvector")]
        default:
            switch type.uppercased() {
            case "INTEGER": return [(column, "bigint")]
            case "BLOB": return [(column, "bytea")]
            case "TEXT": return [(column, "text")]
            default: return [(column, "unknown SQLite type \(type)")]
            }
        }
    }
}

/// The same of a PostgreSQL database's public schema.
struct PostgresSchema {
    var columns: [String: [String: String]] = [:]
    var indexes: Set<String> = []

    init(_ connection: PostgresConnection) throws {
        let rows = try connection.query("""
            SELECT table_name::text, column_name::text, data_type::text FROM information_schema.columns
            WHERE table_schema = 'public'
            """) { (try $0.string(0), try $0.string(1), try $0.string(2)) }
        for (table, column, type) in rows { columns[table, default: [:]][column] = type }
        indexes = Set(try connection.query("SELECT indexname::text FROM pg_indexes WHERE schemaname = 'public'") { try $0.string(0) })
    }
}
