internal import Foundation
internal import TandemPostgres
internal import TandemStorePostgres

/// A PostgreSQL database, as one side of a copy.
///
/// Tables come from `information_schema.columns` of the `public` schema, leaving out
/// `schema_migrations` (its version is compared instead). Kinds come from the column types
/// (`bigint`, `double precision`, `text`, `bytea`, `tsvector` = ``CopyKind/tokens``); four
/// columns `X_integer`, `X_real`, `X_text`, `X_bytes` are one ``CopyKind/any`` column `X`
/// (P18). Reads go through a cursor in one `REPEATABLE READ READ ONLY` transaction; writes
/// are one `COPY … (FORMAT binary)` per table inside one transaction; a full-text body goes
/// through a temporary table and the store's own expression,
/// `array_to_tsvector(string_to_array(body, ' '))`.
final class PostgresCopyDatabase: CopyDatabase {
    private let connection: PostgresConnection
    private static let typedSuffixes: [(String, PostgresCopyType)] =
        [("_integer", .bigint), ("_real", .doublePrecision), ("_text", .text), ("_bytes", .bytea)]

    var label: String { "the PostgreSQL database" }

    /// Connects (no statement timeout: a large table's COPY may take minutes).
    init(url: String) throws {
        do {
            connection = try PostgresConnection(url: url, statementTimeout: nil)
        } catch {
            throw StoreCopyError(.source, "cannot connect to the PostgreSQL database: \(error.message)")
        }
        try connection.execute("SET application_name = 'tandem migrate'")
    }

    /// Every other client's connection to the database counts, whatever `application_name` it
    /// gives (a server's URL may set its own: review 49) and whatever role it logged in as
    /// (another role's rows show no `backend_type`: review 50), but this copy's own; background
    /// workers (autovacuum) have no role. Another copy
    /// into the same database holds the files directory's lock (``TandemStore/DataDirectoryLock``).
    func servers() throws -> Int {
        try connection.queryOne("""
            SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
            AND usesysid IS NOT NULL AND coalesce(backend_type, 'client backend') = 'client backend'
            AND coalesce(application_name, '') <> 'tandem migrate'
            """) { Int(try $0.int64(0)) } ?? 0
    }

    deinit { connection.close() }

    func schemaVersion() throws -> Int? {
        let exists = try connection.queryOne("SELECT to_regclass('public.schema_migrations') IS NOT NULL") { try $0.bool(0) } ?? false
        guard exists else { return nil }
        let version = try connection.queryOne("SELECT COALESCE(MAX(version), 0) FROM schema_migrations") { try $0.int64(0) } ?? 0
        return version == 0 ? nil : Int(version)
    }

    func createSchema() throws { try PostgresMigrator.migrate(connection) }

    func tables() throws -> [CopyTable] {
        let rows = try connection.query("""
            SELECT table_name::text, column_name::text, data_type::text, is_identity::text
            FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
            ORDER BY table_name, ordinal_position
            """) { (table: try $0.string(0), column: try $0.string(1), type: try $0.string(2), identity: try $0.string(3) == "YES") }
        var byTable: [String: [(column: String, type: String, identity: Bool)]] = [:]
        for row in rows { byTable[row.table, default: []].append((row.column, row.type, row.identity)) }
        return try byTable.keys.sorted().map { name in
            let physical = byTable[name]!
            var columns: [CopyColumn] = []
            for column in physical {
                if let typed = Self.typedBase(column.column), Self.typedSuffixes.allSatisfy({ suffix in
                    physical.contains { $0.column == typed + suffix.0 } }) {
                    if column.column == typed + "_integer" { columns.append(CopyColumn(name: typed, kind: .any)) }
                    continue
                }
                let kind: CopyKind
                switch column.type {
                case "bigint": kind = .integer
                case "double precision": kind = .real
                case "text": kind = .text
                case "bytea": kind = .bytes
                case "tsvector": kind = .tokens
                default: throw StoreCopyError(.schema, "\(name).\(column.column) in \(label) has type \(column.type), which the copy does not know")
                }
                columns.append(CopyColumn(name: column.column, kind: kind))
            }
            return CopyTable(name: name, columns: columns, identity: physical.first { $0.identity }?.column)
        }
    }

    func count(_ table: CopyTable) throws -> Int {
        Int(try connection.queryOne("SELECT count(*) FROM \(PostgresConnection.quoted(table.name))") { try $0.int64(0) } ?? 0)
    }

    func scan(_ table: CopyTable, batchSize: Int, _ body: ([[CopyValue]]) throws -> Void) throws {
        let select = table.columns.map { column -> String in
            let name = PostgresConnection.quoted(column.name)
            switch column.kind {
            case .any: return Self.typedSuffixes.map { PostgresConnection.quoted(column.name + $0.0) }.joined(separator: ", ")
            case .tokens: return "array_to_string(tsvector_to_array(\(name)), ' ')"
            default: return name
            }
        }.joined(separator: ", ")
        try connection.execute("DECLARE tandem_copy NO SCROLL CURSOR FOR SELECT \(select) FROM \(PostgresConnection.quoted(table.name))")
        defer { try? connection.execute("CLOSE tandem_copy") }
        while true {
            let batch = try connection.query("FETCH FORWARD \(batchSize) FROM tandem_copy") { row in
                var values: [CopyValue] = []
                values.reserveCapacity(table.columns.count)
                var index = 0
                for column in table.columns {
                    if column.kind == .any {
                        var value = CopyValue.null
                        for offset in 0..<Self.typedSuffixes.count where !row.isNull(index + offset) {
                            value = try Self.value(row, index + offset)
                        }
                        // The field index's text is held escaped on PostgreSQL (P50).
                        if case .text(let text) = value { value = .text(IndexedText.unescape(text)) }
                        values.append(value)
                        index += Self.typedSuffixes.count
                    } else {
                        let value = try Self.value(row, index)
                        guard let normalised = value.normalised(to: column.kind) else {
                            throw StoreCopyError(.value, "\(table.name).\(column.name) in \(label) holds \(value.className) in a \(column.kind.rawValue) column")
                        }
                        values.append(normalised)
                        index += 1
                    }
                }
                return values
            }
            if batch.isEmpty { break }
            try body(batch)
            if batch.count < batchSize { break }
        }
    }

    func positions(_ tables: [CopyTable]) throws -> [String: Int64] {
        var positions: [String: Int64] = [:]
        for table in tables {
            guard let identity = table.identity else { continue }
            let largest = try connection.queryOne("SELECT coalesce(max(\(PostgresConnection.quoted(identity))), 0)::bigint FROM \(PostgresConnection.quoted(table.name))") {
                try $0.int64(0)
            } ?? 0
            // pg_sequence_last_value is NULL until the sequence first hands a number out.
            let last = try connection.queryOne("SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence($1, $2)::regclass), 0)::bigint",
                                               [.text(PostgresConnection.quoted(table.name)), .text(identity)]) { try $0.int64(0) } ?? 0
            positions[table.name] = max(largest, last)
        }
        return positions
    }

    func keepsPosition(_ table: CopyTable) throws -> Bool { table.identity != nil }

    func generation() throws -> Int64 {
        try connection.queryOne("SELECT generation FROM feed_clock WHERE id = 1") { try $0.int64(0) } ?? 0
    }

    func startGeneration(_ generation: Int64, at time: Int64) throws {
        try connection.run("UPDATE feed_clock SET generation = $1 WHERE id = 1", [.integer(generation)])
        try connection.run("INSERT INTO store_generations (generation, began_at) VALUES ($1, $2)", [.integer(generation), .integer(time)])
    }

    /// The cluster's system identifier (`pg_control_system()`, set by initdb) and the
    /// database's OID: the same for `localhost` and `127.0.0.1`, a socket or a TCP URL.
    func identity() throws -> String? {
        try connection.queryOne("""
            SELECT (SELECT system_identifier FROM pg_control_system())::text || '/' ||
                   (SELECT oid FROM pg_database WHERE datname = current_database())::text
            """) { try $0.string(0) }
    }

    /// `ANALYZE`: the copy's COPY loads leave the tables without statistics until autovacuum
    /// gets to them, and the first queries meanwhile plan as if the tables were empty (P46's
    /// 20-second first query; PostgreSQL 15 "Populating a Database", 14.4.9: "Run ANALYZE
    /// Afterwards").
    func refreshStatistics() throws -> String? {
        try connection.execute("ANALYZE")
        return "migrate: ANALYZE done (the planner's statistics of the loaded tables)"
    }

    func reading<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(.repeatableRead) { connection in
            try connection.execute("SET TRANSACTION READ ONLY")
            return try body()
        }
    }

    func writing<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(.readCommitted) { _ in try body() }
    }

    func insertionOrder(_ tables: [CopyTable]) throws -> [CopyTable] {
        let references = try connection.query("""
            SELECT c.conrelid::regclass::text, c.confrelid::regclass::text FROM pg_constraint c
            JOIN pg_namespace n ON n.oid = c.connamespace
            WHERE c.contype = 'f' AND n.nspname = 'public'
            """) { (from: Self.unquoted(try $0.string(0)), to: Self.unquoted(try $0.string(1))) }
        var parents: [String: Set<String>] = [:]
        for reference in references where reference.from != reference.to { parents[reference.from, default: []].insert(reference.to) }
        // Parents first (Kahn's algorithm; among ready tables, the first by name, so the order is stable).
        let names = Set(tables.map(\.name))
        var remaining = tables.sorted { $0.name < $1.name }
        var placed: Set<String> = []
        var ordered: [CopyTable] = []
        while !remaining.isEmpty {
            guard let next = remaining.firstIndex(where: { (parents[$0.name] ?? []).intersection(names).isSubset(of: placed) }) else {
                throw StoreCopyError(.schema, "the foreign keys of \(remaining.map(\.name).joined(separator: ", ")) form a cycle")
            }
            let table = remaining.remove(at: next)
            placed.insert(table.name)
            ordered.append(table)
        }
        return ordered
    }

    /// Foreign keys and indexes that back no constraint are dropped for the load and made
    /// again after it, inside the transaction (PostgreSQL's "Populating a Database": one
    /// sorted index build and one checking join instead of a B-tree insert and a key lookup
    /// per row). A role that cannot drop them (not the tables' owner) loads with them in place.
    func bulkLoading(_ body: () throws -> Void) throws {
        let foreignKeys = try connection.query("""
            SELECT conrelid::regclass::text, conname::text, pg_get_constraintdef(oid) FROM pg_constraint
            WHERE contype = 'f' AND connamespace = 'public'::regnamespace ORDER BY conrelid::regclass::text, conname
            """) { (table: try $0.string(0), name: try $0.string(1), definition: try $0.string(2)) }
        let indexes = try connection.query("""
            SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index i
            JOIN pg_class c ON c.oid = i.indrelid
            WHERE c.relnamespace = 'public'::regnamespace AND c.relname <> 'schema_migrations'
              AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
            ORDER BY 1
            """) { (name: try $0.string(0), definition: try $0.string(1)) }
        let dropped: Bool
        do {
            try connection.transaction { connection in
                for key in foreignKeys {
                    try connection.execute("ALTER TABLE \(key.table) DROP CONSTRAINT \(PostgresConnection.quoted(key.name))")
                }
                for index in indexes { try connection.execute("DROP INDEX \(index.name)") }
            }
            dropped = true
        } catch let error as PostgresError where error.sqlState == "42501" {
            dropped = false
        }
        try body()
        guard dropped else { return }
        for index in indexes { try connection.execute(index.definition) }
        for key in foreignKeys {
            try connection.execute("ALTER TABLE \(key.table) ADD CONSTRAINT \(PostgresConnection.quoted(key.name)) \(key.definition)")
        }
    }

    func clear(_ tables: [CopyTable]) throws {
        guard !tables.isEmpty else { return }
        try connection.execute("TRUNCATE \(tables.map { PostgresConnection.quoted($0.name) }.joined(separator: ", "))")
    }

    func insert(_ table: CopyTable, _ feed: (([[CopyValue]]) throws -> Void) throws -> Void) throws {
        var physical: [(name: String, type: PostgresCopyType)] = []
        for column in table.columns {
            switch column.kind {
            case .integer: physical.append((column.name, .bigint))
            case .real: physical.append((column.name, .doublePrecision))
            case .text, .tokens: physical.append((column.name, .text))
            case .bytes: physical.append((column.name, .bytea))
            case .any: physical += Self.typedSuffixes.map { (column.name + $0.0, $0.1) }
            }
        }
        let fullText = table.columns.contains { $0.kind == .tokens }
        // A tsvector has no text form both sides share: stage the token lists, then build the
        // vectors with the store's expression (PostgresStore+FieldIndex).
        let destination = fullText ? "tandem_copy_stage" : table.name
        if fullText {
            let definition = physical.map { "\(PostgresConnection.quoted($0.name)) \($0.type == .bigint ? "bigint" : "text")" }
            try connection.execute("CREATE TEMPORARY TABLE tandem_copy_stage (\(definition.joined(separator: ", "))) ON COMMIT DROP")
        }
        try connection.copyIn(table: destination, columns: physical) { copy in
            try feed { batch in
                for row in batch {
                    var values: [PostgresValue] = []
                    values.reserveCapacity(physical.count)
                    for (value, column) in zip(row, table.columns) {
                        if column.kind == .any {
                            values += Self.typedSuffixes.map { suffix -> PostgresValue in
                                switch (value, suffix.1) {
                                case (.integer(let n), .bigint): .integer(n)
                                case (.real(let d), .doublePrecision): .double(d)
                                case (.text(let s), .text): .text(IndexedText.escape(s))
                                case (.bytes(let b), .bytea): .bytes(b)
                                default: .null
                                }
                            }
                            continue
                        }
                        switch value {
                        case .null: values.append(.null)
                        case .integer(let n): values.append(.integer(n))
                        case .real(let d): values.append(.double(d))
                        case .text(let s): values.append(.text(s))
                        case .bytes(let b): values.append(.bytes(b))
                        }
                    }
                    do {
                        try copy.append(values)
                    } catch let error as PostgresError {
                        throw StoreCopyError(.value, "a row of \(table.name) cannot go into \(label): \(error.message)")
                    }
                }
            }
        }
        if fullText {
            let names = physical.map { PostgresConnection.quoted($0.name) }
            let expressions = table.columns.map { column in
                column.kind == .tokens
                    ? "array_to_tsvector(string_to_array(\(PostgresConnection.quoted(column.name)), ' '))"
                    : PostgresConnection.quoted(column.name)
            }
            try connection.execute("""
                INSERT INTO \(PostgresConnection.quoted(table.name)) (\(names.joined(separator: ", ")))
                SELECT \(expressions.joined(separator: ", ")) FROM tandem_copy_stage;
                DROP TABLE tandem_copy_stage
                """)
        }
    }

    func setPositions(_ positions: [String: Int64], tables: [CopyTable]) throws {
        for table in tables {
            guard let identity = table.identity else { continue }
            let position = positions[table.name] ?? 0
            // Past both the source's position and every copied number; a fresh identity
            // (nothing handed out) starts at 1.
            try connection.run("""
                SELECT setval(pg_get_serial_sequence($1, $2), greatest($3::bigint, coalesce(max(\(PostgresConnection.quoted(identity))), 0), 1),
                              greatest($3::bigint, coalesce(max(\(PostgresConnection.quoted(identity))), 0)) > 0)
                FROM \(PostgresConnection.quoted(table.name))
                """, [.text(PostgresConnection.quoted(table.name)), .text(identity), .integer(position)])
        }
    }

    /// A PostgreSQL value as the copy carries it (booleans, which the schema has none of, as 0/1).
    private static func value(_ row: PostgresRow, _ index: Int) throws -> CopyValue {
        switch try row.value(index) {
        case .null: .null
        case .integer(let n): .integer(n)
        case .double(let d): .real(d)
        case .text(let s): .text(s)
        case .bytes(let b): .bytes(b)
        case .bool(let b): .integer(b ? 1 : 0)
        }
    }

    /// `X` for a column named `X_integer`, `X_real`, `X_text` or `X_bytes`.
    private static func typedBase(_ column: String) -> String? {
        for (suffix, _) in typedSuffixes where column.hasSuffix(suffix) { return String(column.dropLast(suffix.count)) }
        return nil
    }

    /// A `regclass` printed as text is quoted only when it must be.
    private static func unquoted(_ name: String) -> String {
        guard name.hasPrefix("\""), name.hasSuffix("\""), name.count >= 2 else { return name }
        return String(name.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
    }
}
