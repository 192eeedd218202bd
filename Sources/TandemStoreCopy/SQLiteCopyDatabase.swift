internal import Foundation
internal import TandemSQLite
internal import TandemStoreSQLite

/// `tandem.sqlite` in a data directory, as one side of a copy.
///
/// Tables come from `sqlite_master` and `pragma_table_info`, leaving out SQLite's own tables
/// (`sqlite_sequence`: its numbers are the identity positions) and FTS5's shadow tables; the
/// FTS5 table `field_search` is `(record_id = rowid, body)`. Kinds come from declared types
/// (`INTEGER`, `REAL`, `TEXT`, `BLOB`, none = ``CopyKind/any``). Writes run in one
/// `BEGIN IMMEDIATE` transaction with foreign keys off, so tables go in any order;
/// `PRAGMA foreign_key_check` checks them all before COMMIT.
final class SQLiteCopyDatabase: CopyDatabase {
    let directory: String
    private let connection: SQLiteConnection

    var label: String { "tandem.sqlite in \(directory)" }

    /// Opens `directory/tandem.sqlite`, creating this build's store there first when `create`
    /// (through `SQLiteStore`, the one place that makes a data directory).
    init(directory: String, create: Bool) throws {
        self.directory = directory
        let path = directory + "/tandem.sqlite"
        if !FileManager.default.fileExists(atPath: path) {
            guard create else { throw StoreCopyError(.source, "no Tandem data in \(directory) (no tandem.sqlite)") }
            try SQLiteStore(directory: directory, options: .init(readerCount: 1)).close()
        }
        connection = try SQLiteConnection(path: path)
    }

    deinit { connection.close() }

    func schemaVersion() throws -> Int? {
        let version = try connection.queryOne("PRAGMA user_version") { Int($0.int64(0)) } ?? 0
        return version == 0 ? nil : version
    }

    func createSchema() throws {
        // `init(create: true)` made it; a file at version 0 is not a store this build made.
        throw StoreCopyError(.refused, "\(label) has no Tandem schema (user_version 0)")
    }

    func tables() throws -> [CopyTable] {
        let entries = try connection.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name") {
            (name: $0.text(0), sql: $0.isNull(1) ? "" : $0.text(1))
        }
        let virtual = entries.filter { $0.sql.uppercased().hasPrefix("CREATE VIRTUAL TABLE") }.map(\.name)
        var tables: [CopyTable] = []
        for entry in entries {
            if entry.name.hasPrefix("sqlite_") || virtual.contains(where: { entry.name.hasPrefix($0 + "_") }) { continue }
            let info = try connection.query("SELECT name, type, pk FROM pragma_table_info(?)", [.text(entry.name)]) {
                (name: $0.text(0), type: $0.text(1).uppercased(), pk: $0.int64(2))
            }
            if virtual.contains(entry.name) {
                // FTS5: every column is a full-text body; the rowid is the record's id.
                tables.append(CopyTable(name: entry.name, columns: [CopyColumn(name: "record_id", kind: .integer)]
                                        + info.map { CopyColumn(name: $0.name, kind: .tokens) }, identity: nil))
                continue
            }
            var columns: [CopyColumn] = []
            for column in info {
                let kind: CopyKind
                switch column.type {
                case "INTEGER": kind = .integer
                case "REAL": kind = .real
                case "TEXT": kind = .text
                case "BLOB": kind = .bytes
                case "": kind = .any
                default: throw StoreCopyError(.schema, "\(entry.name).\(column.name) in \(label) has type \(column.type), which the copy does not know")
                }
                columns.append(CopyColumn(name: column.name, kind: kind))
            }
            // An INTEGER PRIMARY KEY of a rowid table is the rowid: SQLite hands its numbers out.
            let keys = info.filter { $0.pk > 0 }
            let rowidTable = !entry.sql.uppercased().contains("WITHOUT ROWID")
            let identity = (rowidTable && keys.count == 1 && keys[0].type == "INTEGER") ? keys[0].name : nil
            tables.append(CopyTable(name: entry.name, columns: columns, identity: identity))
        }
        return tables
    }

    func count(_ table: CopyTable) throws -> Int {
        try connection.queryOne("SELECT count(*) FROM \(quoted(table.name))") { Int($0.int64(0)) } ?? 0
    }

    func scan(_ table: CopyTable, batchSize: Int, _ body: ([[CopyValue]]) throws -> Void) throws {
        let statement = try connection.statement("SELECT \(selectList(table)) FROM \(quoted(table.name))")
        defer { statement.reset() }
        var batch: [[CopyValue]] = []
        batch.reserveCapacity(batchSize)
        while try statement.step() {
            var row: [CopyValue] = []
            row.reserveCapacity(table.columns.count)
            for (index, column) in table.columns.enumerated() {
                let value: CopyValue = switch statement.value(Int32(index)) {
                case .null: .null
                case .integer(let n): .integer(n)
                case .real(let d): .real(d)
                case .text(let s): .text(s)
                case .blob(let b): .bytes(b)
                }
                guard let normalised = value.normalised(to: column.kind) else {
                    throw StoreCopyError(.value, "\(table.name).\(column.name) in \(label) holds \(value.className) in a \(column.kind.rawValue) column")
                }
                row.append(normalised)
            }
            batch.append(row)
            if batch.count == batchSize {
                try body(batch)
                batch.removeAll(keepingCapacity: true)
            }
        }
        if !batch.isEmpty { try body(batch) }
    }

    func positions(_ tables: [CopyTable]) throws -> [String: Int64] {
        var positions: [String: Int64] = [:]
        let sequences = Dictionary(try connection.query("SELECT name, seq FROM sqlite_sequence") { ($0.text(0), $0.int64(1)) },
                                   uniquingKeysWith: max)
        for table in tables {
            guard let identity = table.identity else { continue }
            let largest = try connection.queryOne("SELECT coalesce(max(\(quoted(identity))), 0) FROM \(quoted(table.name))") { $0.int64(0) } ?? 0
            positions[table.name] = max(largest, sequences[table.name] ?? 0)
        }
        return positions
    }

    func keepsPosition(_ table: CopyTable) throws -> Bool {
        try autoincrementTables().contains(table.name)
    }

    private func autoincrementTables() throws -> Set<String> {
        Set(try connection.query("SELECT name FROM sqlite_master WHERE type = 'table' AND upper(sql) LIKE '%AUTOINCREMENT%'") { $0.text(0) })
    }

    func reading<T>(_ body: () throws -> T) throws -> T {
        try connection.execute("BEGIN")
        do {
            let value = try body()
            try connection.execute("COMMIT")
            return value
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    func writing<T>(_ body: () throws -> T) throws -> T {
        // Foreign keys are off for the load (they can only change outside a transaction) and
        // checked in one pass before COMMIT: enforcing them per row needs the child tables'
        // indexes, which `bulkLoading` drops.
        try connection.execute("PRAGMA foreign_keys = OFF")
        defer { try? connection.execute("PRAGMA foreign_keys = ON") }
        try connection.execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            let violations = try connection.query("PRAGMA foreign_key_check") { "\($0.text(0)) row \($0.int64(1)) → \($0.text(2))" }
            guard violations.isEmpty else {
                throw StoreCopyError(.verification, "foreign keys broken in \(label): \(violations.prefix(3).joined(separator: ", "))")
            }
            try connection.execute("COMMIT")
            return value
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    func insertionOrder(_ tables: [CopyTable]) throws -> [CopyTable] { tables }

    /// Indexes of its own (not a key's) are dropped for the load and made again after it, in
    /// the transaction: one sorted build each instead of a B-tree insert per row.
    func bulkLoading(_ body: () throws -> Void) throws {
        let indexes = try connection.query("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name") {
            (name: $0.text(0), sql: $0.text(1))
        }
        for index in indexes { try connection.execute("DROP INDEX \(quoted(index.name))") }
        try body()
        for index in indexes { try connection.execute(index.sql) }
    }

    func clear(_ tables: [CopyTable]) throws {
        for table in tables { try connection.run("DELETE FROM \(quoted(table.name))") }
        try connection.run("DELETE FROM sqlite_sequence")
    }

    func insert(_ table: CopyTable, _ feed: (([[CopyValue]]) throws -> Void) throws -> Void) throws {
        let names = table.columns.map { isFullText(table) && $0.name == "record_id" ? "rowid" : quoted($0.name) }
        let sql = "INSERT INTO \(quoted(table.name)) (\(names.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: names.count).joined(separator: ", ")))"
        try feed { batch in
            for row in batch {
                try connection.run(sql, row.map { value in
                    switch value {
                    case .null: .null
                    case .integer(let n): .integer(n)
                    case .real(let d): .real(d)
                    case .text(let s): .text(s)
                    case .bytes(let b): .blob(b)
                    }
                })
            }
        }
    }

    func setPositions(_ positions: [String: Int64], tables: [CopyTable]) throws {
        // Only AUTOINCREMENT tables keep a position of their own (sqlite_sequence); other rowid
        // tables hand out max(rowid) + 1, which the copied rows already set (decision P42).
        let autoincrement = try autoincrementTables()
        for table in tables where autoincrement.contains(table.name) {
            guard let position = positions[table.name], position > 0 else { continue }
            let current = try connection.queryOne("SELECT max(seq) FROM sqlite_sequence WHERE name = ?", [.text(table.name)]) {
                $0.isNull(0) ? nil : $0.int64(0)
            } ?? nil
            if let current {
                try connection.run("UPDATE sqlite_sequence SET seq = ? WHERE name = ?", [.integer(max(current, position)), .text(table.name)])
            } else {
                try connection.run("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [.text(table.name), .integer(position)])
            }
        }
    }

    private func selectList(_ table: CopyTable) -> String {
        table.columns.map { isFullText(table) && $0.name == "record_id" ? "rowid" : quoted($0.name) }.joined(separator: ", ")
    }

    private func isFullText(_ table: CopyTable) -> Bool { table.columns.contains { $0.kind == .tokens } }

    private func quoted(_ name: String) -> String { "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }

    func generation() throws -> Int64 {
        try connection.queryOne("SELECT generation FROM feed_clock WHERE id = 1") { $0.int64(0) } ?? 0
    }

    func startGeneration(_ generation: Int64, at time: Int64) throws {
        try connection.run("UPDATE feed_clock SET generation = ? WHERE id = 1", [.integer(generation)])
        try connection.run("INSERT INTO store_generations (generation, began_at) VALUES (?, ?)", [.integer(generation), .integer(time)])
    }

    /// Servers on a SQLite store show by the lock on its directory (``TandemStore/DataDirectoryLock``).
    func servers() throws -> Int { 0 }

    func identity() throws -> String? { nil }

    /// Nothing: the SQLite store keeps no planner statistics of its own (no `sqlite_stat1`).
    func refreshStatistics() throws -> String? { nil }
}
