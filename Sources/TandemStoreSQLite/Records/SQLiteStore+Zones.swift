import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    static let zoneColumns = "id, name, owner, change_seq, created_at"

    static func storedZone(_ row: SQLiteStatement) -> StoredZone {
        StoredZone(key: row.int64(0), zoneID: ZoneID(zoneName: row.text(1), ownerRecordName: row.text(2)),
                   changeSequence: row.int64(3), createdAt: row.int64(4))
    }

    static func scopeArguments(_ scope: DatabaseScope) -> [SQLiteValue] {
        [.text(scope.container), .text(scope.environment.rawValue), .text(scope.database.rawValue), .text(scope.owner)]
    }

    func zone(_ scope: DatabaseScope, name: String) throws -> StoredZone? {
        try db.queryOne("""
            SELECT \(Self.zoneColumns) FROM zones
            WHERE container_id = ? AND environment = ? AND database = ? AND owner = ? AND name = ?
            """, Self.scopeArguments(scope) + [.text(name)], Self.storedZone)
    }

    /// One statement: the zone, its record (P63) and, with `schemaETag`, its schema's etag (P74).
    func zoneAndRecord(_ scope: DatabaseScope, zoneName: String, recordName: String, decodeFields: Bool, schemaETag: Bool) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?)? {
        try db.queryOne(schemaETag ? Self.zoneAndRecordAndSchemaSQL : Self.zoneAndRecordSQL,
                        [.text(scope.container), .text(scope.environment.rawValue), .text(scope.database.rawValue),
                         .text(scope.owner), .text(zoneName), .text(recordName)]) { row in
            let zone = Self.storedZone(row)
            let etag = schemaETag ? Self.optionalText(row, 18) : nil
            guard !row.isNull(5) else { return (zone, nil, etag) }
            return (zone, (try RecordRows.record(row, zoneID: zone.zoneID, from: 5, decodeFields: decodeFields), Self.optionalText(row, 17)), etag)
        }
    }

    /// `zoneAndRecord`'s statement, made once rather than per read (its text is also the key
    /// of the connection's statement cache).
    private static func zoneAndRecordSQL(schemaETag: Bool) -> String {
        """
        SELECT z.id, z.name, z.owner, z.change_seq, z.created_at, \(RecordRows.recordColumns), r.membership\(schemaETag ? ", s.etag" : "")
        FROM zones z LEFT JOIN records r ON r.zone_id = z.id AND r.name = ?6\(schemaETag ? schemaJoin : "")
        WHERE z.container_id = ?1 AND z.environment = ?2 AND z.database = ?3 AND z.owner = ?4 AND z.name = ?5
        """
    }
    private static let zoneAndRecordSQL = zoneAndRecordSQL(schemaETag: false)
    private static let zoneAndRecordAndSchemaSQL = zoneAndRecordSQL(schemaETag: true)
    private static let schemaJoin = " LEFT JOIN schemas s ON s.container_id = z.container_id AND s.environment = z.environment"

    func zones(_ scope: DatabaseScope) throws -> [StoredZone] {
        try db.query("""
            SELECT \(Self.zoneColumns) FROM zones
            WHERE container_id = ? AND environment = ? AND database = ? AND owner = ? ORDER BY id
            """, Self.scopeArguments(scope), Self.storedZone)
    }

    func ensureZone(_ scope: DatabaseScope, name: String, at time: Int64) throws -> StoredZone {
        if let existing = try zone(scope, name: name) { return existing }
        try db.run("""
            INSERT INTO zones (container_id, environment, database, owner, name, change_seq, created_at)
            VALUES (?, ?, ?, ?, ?, 0, ?)
            """, Self.scopeArguments(scope) + [.text(name), .integer(time)])
        return StoredZone(key: db.lastInsertRowID, zoneID: ZoneID(zoneName: name, ownerRecordName: scope.owner),
                          changeSequence: 0, createdAt: time)
    }

    func deleteZone(_ zone: StoredZone) throws {
        // Index and reference rows go with their records (ON DELETE CASCADE); deleting them by
        // zone first keeps the cascade from probing row by row.
        try db.run("DELETE FROM field_index WHERE zone_id = ?", [.integer(zone.key)])
        try db.run("DELETE FROM record_references WHERE source_id IN (SELECT id FROM records WHERE zone_id = ?)", [.integer(zone.key)])
        try db.run("DELETE FROM records WHERE zone_id = ?", [.integer(zone.key)])
        try db.run("DELETE FROM record_changes WHERE zone_id = ?", [.integer(zone.key)])
        try db.run("DELETE FROM share_exits WHERE zone_id = ?", [.integer(zone.key)])
        try db.run("DELETE FROM zones WHERE id = ?", [.integer(zone.key)])
    }

    func nextChangeSequence(_ zone: StoredZone) throws -> Int64 {
        guard let next = try db.queryOne("UPDATE zones SET change_seq = change_seq + 1 WHERE id = ? RETURNING change_seq",
                                         [.integer(zone.key)], { $0.int64(0) }) else {
            throw SQLiteError(code: .notfound, message: "zone \(zone.key) vanished", sql: nil)
        }
        return next
    }
}
