import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func schema(container: String, environment: Environment) throws -> StoredSchema? {
        try db.queryOne("SELECT text, etag, updated_at FROM schemas WHERE container_id = ? AND environment = ?",
                        [.text(container), .text(environment.rawValue)]) {
            StoredSchema(text: $0.text(0), etag: $0.text(1), updatedAt: $0.int64(2))
        }
    }

    func schemaETag(container: String, environment: Environment) throws -> String? {
        try db.queryOne("SELECT etag FROM schemas WHERE container_id = ? AND environment = ?",
                        [.text(container), .text(environment.rawValue)]) { $0.text(0) }
    }

    static func adminToken(_ row: SQLiteStatement) -> StoredAdminToken {
        StoredAdminToken(id: sessionID(row.blob(0)), createdAt: row.int64(1), expiresAt: row.isNull(2) ? nil : row.int64(2),
                         revokedAt: row.isNull(3) ? nil : row.int64(3))
    }

    func adminToken(hash: [UInt8]) throws -> StoredAdminToken? {
        try db.queryOne("SELECT hash, created_at, expires_at, revoked_at FROM admin_tokens WHERE hash = ?", [.blob(hash)], Self.adminToken)
    }

    func adminTokens() throws -> [StoredAdminToken] {
        try db.query("SELECT hash, created_at, expires_at, revoked_at FROM admin_tokens ORDER BY created_at, hash", [], Self.adminToken)
    }

    func addAdminToken(hash: [UInt8], expiresAt: Int64?, at time: Int64) throws {
        try db.run("INSERT INTO admin_tokens (hash, created_at, expires_at) VALUES (?, ?, ?)",
                   [.blob(hash), .integer(time), expiresAt.map(SQLiteValue.integer) ?? .null])
    }

    func revokeAdminToken(id: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE admin_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND lower(hex(substr(hash, 1, 8))) = ?",
                   [.integer(time), .text(id.lowercased())])
        return db.changes > 0
    }

    func putSchema(_ text: String, etag: String, fields: [IndexedField], container: String, environment: Environment,
                   createSortIndexes: Bool, at time: Int64) throws -> Set<String> {
        let key: [SQLiteValue] = [.text(container), .text(environment.rawValue)]
        let hadSchema = try schemaETag(container: container, environment: environment) != nil
        let old = try db.query("""
            SELECT record_type, field, options, sort_index FROM schema_fields WHERE container_id = ? AND environment = ?
            """, key) { row in
            (field: IndexedField(recordType: row.text(0), field: row.text(1), options: IndexOptions(rawValue: row.int64(2)),
                                 ordered: !row.isNull(3)), sortIndex: row.isNull(3) ? nil : row.text(3))
        }
        try db.run("""
            INSERT INTO schemas (container_id, environment, text, etag, updated_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (container_id, environment) DO UPDATE SET text = excluded.text, etag = excluded.etag, updated_at = excluded.updated_at
            """, key + [.text(text), .text(etag), .integer(time)])
        try db.run("DELETE FROM schema_fields WHERE container_id = ? AND environment = ?", key)
        let changes = SchemaFieldChanges(before: old, after: fields)
        for field in fields {
            let index = changes.sortIndex(for: field, createSortIndexes: createSortIndexes) {
                SortIndexes.name(recordType: $0.recordType, field: $0.field)
            }
            if let index {
                try db.execute("""
                    CREATE INDEX IF NOT EXISTS \(index) ON records(zone_id, \(SortIndexes.expression(field.field, table: nil)), id) \
                    WHERE type = \(SortIndexes.literal(field.recordType))
                    """)
            }
            try db.run("""
                INSERT INTO schema_fields (container_id, environment, record_type, field, options, sort_index) VALUES (?, ?, ?, ?, ?, ?)
                """, key + [.text(field.recordType), .text(field.field), .integer(field.options.rawValue), index.map(SQLiteValue.text) ?? .null])
        }
        // An expression index another container environment still uses stays.
        for name in Set(old.compactMap(\.sortIndex)) {
            let used = try db.queryOne("SELECT 1 FROM schema_fields WHERE sort_index = ?", [.text(name)]) { _ in true } ?? false
            if !used { try db.execute("DROP INDEX IF EXISTS \(name)") }
        }
        // Every type with records needs rebuilding when the environment had no schema.
        var changed = changes.changedRecordTypes
        if !hadSchema {
            let types = try db.query("""
                SELECT DISTINCT r.type FROM zones z JOIN records r ON r.zone_id = z.id WHERE z.container_id = ? AND z.environment = ?
                """, key) { $0.text(0) }
            changed.formUnion(types)
        }
        return changed
    }

    func rebuildIndexes(container: String, environment: Environment, recordType: String, after: Int64,
                        limit: Int) throws -> (last: Int64, count: Int, unsearchable: [String])? {
        let rows = try db.query("""
            SELECT r.id, r.zone_id, \(RecordRows.recordColumns) FROM zones z JOIN records r ON r.zone_id = z.id
            WHERE z.container_id = ? AND z.environment = ? AND r.type = ? AND r.id > ? ORDER BY r.id LIMIT \(limit)
            """, [.text(container), .text(environment.rawValue), .text(recordType), .integer(after)]) { row in
            (id: row.int64(0), zone: row.int64(1), name: row.text(2), changeTag: row.text(4), fields: StoredFields.decode(row.blob(5)).fields)
        }
        guard let last = rows.last else { return nil }
        let indexing = try indexing(zoneKey: rows[0].zone, recordType: recordType)
        var unsearchable: [String] = []
        for row in rows {
            try db.run("DELETE FROM field_index WHERE record_id = ?", [.integer(row.id)])
            do {
                try writeIndexEntries(recordID: row.id, zoneKey: row.zone, recordType: recordType, version: (row.name, row.changeTag),
                                      replacing: true, fields: row.fields, indexing: indexing)
            } catch let error as CloudKitError where error.code == .limitExceeded {
                // Over the full-text limit (P80), refused before anything was written: the rest of its entries.
                unsearchable.append(row.name)
                try writeIndexEntries(recordID: row.id, zoneKey: row.zone, recordType: recordType, version: (row.name, row.changeTag),
                                      replacing: true, fields: row.fields, indexing: indexing, fullText: false)
            }
        }
        return (last.id, rows.count, unsearchable)
    }

    /// How the fields of `recordType` are indexed in the zone's container environment: nil
    /// when that environment has no schema (every field in `field_index`, none searchable).
    func indexing(zoneKey: Int64, recordType: String) throws -> [String: IndexOptions]? {
        let rows = try db.query("""
            SELECT f.field, f.options FROM zones z JOIN schemas s ON s.container_id = z.container_id AND s.environment = z.environment
            LEFT JOIN schema_fields f ON f.container_id = z.container_id AND f.environment = z.environment AND f.record_type = ?
            WHERE z.id = ?
            """, [.text(recordType), .integer(zoneKey)]) { row in
            row.isNull(0) ? nil : (row.text(0), IndexOptions(rawValue: row.int64(1)))
        }
        guard !rows.isEmpty else { return nil }
        return Dictionary(rows.compactMap { $0 }, uniquingKeysWith: { a, _ in a })
    }

    /// An indexed value in SQLite's untyped `field_index.value`.
    static func sqliteValue(_ value: FieldIndexer.Value) -> SQLiteValue {
        switch value {
        case .null: .null
        case .integer(let i): .integer(i)
        case .real(let d): .real(d)
        case .text(let s): .text(s)
        case .blob(let b): .blob(b)
        }
    }

    /// Fields of `recordType` with an expression index, in the zone's container environment.
    func orderedFields(zoneKey: Int64, recordType: String) throws -> Set<String> {
        Set(try db.query("""
            SELECT f.field FROM zones z JOIN schema_fields f ON f.container_id = z.container_id AND f.environment = z.environment
            WHERE z.id = ? AND f.record_type = ? AND f.sort_index IS NOT NULL
            """, [.integer(zoneKey), .text(recordType)]) { $0.text(0) })
    }

    /// Writes a record's `field_index` rows and its full-text entry, as `indexing` says.
    ///
    /// The full-text entry (with `replacing`, the old one's removal first) is written just
    /// before the commit, outside every savepoint (decisions E26), and only if the record is
    /// then still this `version` (name and change tag): a record saved again, or deleted after
    /// its save (whose entry the `records_leave_search` trigger could not see), or whose row id
    /// another record took, in the same transaction, gets no entry from this save. Removals go
    /// only where an entry may be: FTS5 writes out what it holds whenever a row id comes again,
    /// so a removal before every insert would cost a segment per record again.
    func writeIndexEntries(recordID: Int64, zoneKey: Int64, recordType: String, version: (name: String, changeTag: String),
                           replacing: Bool, fields: [String: FieldValue], indexing: [String: IndexOptions]?, fullText: Bool = true) throws {
        let included: (String) -> Bool = { name in
            guard let indexing else { return true }
            return !(indexing[name] ?? []).isDisjoint(with: [.queryable, .sortable])
        }
        // Before anything is written: a record over the full-text limit is refused whole (P80).
        let searchable = Set((indexing ?? [:]).filter { $0.value.contains(.searchable) }.keys)
        let searchBody = fullText ? try FieldIndexer.searchBody(for: fields, searchable: searchable) : nil
        // STRING values may hold U+0000, as on PostgreSQL, where they are escaped (P50, P62).
        try db.allowingTextWithNUL {
            for row in FieldIndexer.rows(for: fields, including: included) {
                try db.run("INSERT INTO field_index (record_id, zone_id, type, field, slot, value) VALUES (?, ?, ?, ?, ?, ?)",
                           [.integer(recordID), .integer(zoneKey), .text(recordType), .text(row.field), .integer(row.slot), Self.sqliteValue(row.value)])
            }
            if replacing { try db.runBeforeCommit("DELETE FROM field_search WHERE rowid = ?", [.integer(recordID)]) }
            if let body = searchBody {
                try db.runBeforeCommit("INSERT INTO field_search (rowid, body) VALUES (?, ?)", [.integer(recordID), .text(body)],
                                       if: ("SELECT 1 FROM records WHERE id = ? AND name = ? AND change_tag = ?",
                                            [.integer(recordID), .text(version.name), .text(version.changeTag)]))
            }
        }
    }
}

/// The expression indexes that order SORTABLE fields: one per (record type, field), partial
/// on the record type, over the field's stored value (`$."field".value` of `records.fields`).
/// The query planner orders by the same expression text, which is what lets SQLite use it.
enum SortIndexes {
    static func name(recordType: String, field: String) -> String? {
        guard safe(recordType), safe(field) else { return nil }
        return "sort_" + FieldIndexer.tag(recordType + "\u{0}" + field)
    }

    static func expression(_ field: String, table: String?) -> String {
        "json_extract(CAST(\(table.map { $0 + "." } ?? "")fields AS TEXT), '$.\"\(field)\".value')"
    }

    static func literal(_ text: String) -> String { "'" + text + "'" }

    /// Names that can sit inside a SQL literal and a JSON path unescaped (every schema name can).
    static func safe(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != 0x27 && $0 != 0x22 && $0 != 0x5C }
    }
}
