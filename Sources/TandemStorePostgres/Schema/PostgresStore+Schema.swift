internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Schemas, what they index, index rebuilds and admin tokens (SQLite: `SQLiteStore+Schema.swift`).
extension PostgresStoreTransaction {
    func schema(container: String, environment: Environment) throws -> StoredSchema? {
        try db.queryOne("SELECT text, etag, updated_at FROM schemas WHERE container_id = $1 AND environment = $2",
                        [.text(container), .text(environment.rawValue)]) {
            StoredSchema(text: try $0.string(0), etag: try $0.string(1), updatedAt: try $0.int64(2))
        }
    }

    func schemaETag(container: String, environment: Environment) throws -> String? {
        try db.queryOne("SELECT etag FROM schemas WHERE container_id = $1 AND environment = $2",
                        [.text(container), .text(environment.rawValue)]) { try $0.string(0) }
    }

    static func adminToken(_ row: PostgresRow) throws -> StoredAdminToken {
        StoredAdminToken(id: sessionID(try row.bytes(0)), createdAt: try row.int64(1), expiresAt: try row.optionalInt64(2),
                         revokedAt: try row.optionalInt64(3))
    }

    func adminToken(hash: [UInt8]) throws -> StoredAdminToken? {
        try db.queryOne("SELECT hash, created_at, expires_at, revoked_at FROM admin_tokens WHERE hash = $1", [.bytes(hash)], Self.adminToken)
    }

    func adminTokens() throws -> [StoredAdminToken] {
        try db.query("SELECT hash, created_at, expires_at, revoked_at FROM admin_tokens ORDER BY created_at, hash", [], Self.adminToken)
    }

    func addAdminToken(hash: [UInt8], expiresAt: Int64?, at time: Int64) throws {
        try db.run("INSERT INTO admin_tokens (hash, created_at, expires_at) VALUES ($1, $2, $3::bigint)",
                   [.bytes(hash), .integer(time), .optional(expiresAt)])
    }

    func revokeAdminToken(id: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE admin_tokens SET revoked_at = $1 WHERE revoked_at IS NULL AND encode(substring(hash from 1 for 8), 'hex') = $2",
                   [.integer(time), .text(id.lowercased())]) > 0
    }

    /// Stores the schema and what it indexes. `schema_fields.sort_index` keeps the name SQLite
    /// gives a field's expression index (what `ordered` means to a later `putSchema`), but no
    /// index is made here: PostgreSQL orders a sort through `field_index` (decisions P26).
    func putSchema(_ text: String, etag: String, fields: [IndexedField], container: String, environment: Environment,
                   createSortIndexes: Bool, at time: Int64) throws -> Set<String> {
        let key: [PostgresValue] = [.text(container), .text(environment.rawValue)]
        let hadSchema = try schemaETag(container: container, environment: environment) != nil
        let old = try db.query("""
            SELECT record_type, field, options, sort_index FROM schema_fields WHERE container_id = $1 AND environment = $2
            """, key) { row in
            (field: IndexedField(recordType: try row.string(0), field: try row.string(1), options: IndexOptions(rawValue: try row.int64(2)),
                                 ordered: !row.isNull(3)), sortIndex: try row.optionalString(3))
        }
        try db.run("""
            INSERT INTO schemas (container_id, environment, text, etag, updated_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (container_id, environment) DO UPDATE SET text = excluded.text, etag = excluded.etag, updated_at = excluded.updated_at
            """, key + [.text(text), .text(etag), .integer(time)])
        try db.run("DELETE FROM schema_fields WHERE container_id = $1 AND environment = $2", key)
        let changes = SchemaFieldChanges(before: old, after: fields)
        for field in fields {
            let index = changes.sortIndex(for: field, createSortIndexes: createSortIndexes) {
                "sort_" + FieldIndexer.tag($0.recordType + "\u{0}" + $0.field)
            }
            try db.run("""
                INSERT INTO schema_fields (container_id, environment, record_type, field, options, sort_index) VALUES ($1, $2, $3, $4, $5, $6)
                """, key + [.text(field.recordType), .text(field.field), .integer(field.options.rawValue), .optional(index)])
        }
        // Every type with records needs rebuilding when the environment had no schema.
        var changed = changes.changedRecordTypes
        if !hadSchema {
            let types = try db.query("""
                SELECT DISTINCT r.type FROM zones z JOIN records r ON r.zone_id = z.id WHERE z.container_id = $1 AND z.environment = $2
                """, key) { try $0.string(0) }
            changed.formUnion(types)
        }
        return changed
    }

    func rebuildIndexes(container: String, environment: Environment, recordType: String, after: Int64,
                        limit: Int) throws -> (last: Int64, count: Int, unsearchable: [String])? {
        let rows = try db.query("""
            SELECT r.id, r.zone_id, r.fields, r.name FROM zones z JOIN records r ON r.zone_id = z.id
            WHERE z.container_id = $1 AND z.environment = $2 AND r.type = $3 AND r.id > $4 ORDER BY r.id LIMIT $5
            """, [.text(container), .text(environment.rawValue), .text(recordType), .integer(after), .integer(Int64(limit))]) { row in
            (id: try row.int64(0), zone: try row.int64(1), fields: StoredFields.decode(try row.bytes(2)).fields, name: try row.string(3))
        }
        guard let last = rows.last else { return nil }
        let indexing = try indexing(zoneKey: rows[0].zone, recordType: recordType)
        var unsearchable: [String] = []
        for row in rows {
            try db.run("DELETE FROM field_index WHERE record_id = $1", [.integer(row.id)])
            try db.run("DELETE FROM field_search WHERE record_id = $1", [.integer(row.id)])
            do {
                try writeIndexEntries(recordID: row.id, zoneKey: row.zone, recordType: recordType, fields: row.fields, indexing: indexing)
            } catch let error as CloudKitError where error.code == .limitExceeded {
                // Over the full-text limit (P80), refused before anything was written: the rest of its entries.
                unsearchable.append(row.name)
                try writeIndexEntries(recordID: row.id, zoneKey: row.zone, recordType: recordType, fields: row.fields, indexing: indexing,
                                      fullText: false)
            }
        }
        return (last.id, rows.count, unsearchable)
    }
}
