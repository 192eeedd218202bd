internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Zones and their change sequence (SQLite: `SQLiteStore+Zones.swift`).
extension PostgresStoreTransaction {
    static let zoneColumns = "id, name, owner, change_seq, created_at"

    static func storedZone(_ row: PostgresRow) throws -> StoredZone {
        StoredZone(key: try row.int64(0), zoneID: ZoneID(zoneName: try row.string(1), ownerRecordName: try row.string(2)),
                   changeSequence: try row.int64(3), createdAt: try row.int64(4))
    }

    static func scopeArguments(_ scope: DatabaseScope) -> [PostgresValue] {
        [.text(scope.container), .text(scope.environment.rawValue), .text(scope.database.rawValue), .text(scope.owner)]
    }

    func zone(_ scope: DatabaseScope, name: String) throws -> StoredZone? {
        try db.queryOne("""
            SELECT \(Self.zoneColumns) FROM zones
            WHERE container_id = $1 AND environment = $2 AND database = $3 AND owner = $4 AND name = $5
            """, Self.scopeArguments(scope) + [.text(name)], Self.storedZone)
    }

    /// One statement: the zone, its record (P63) and, with `schemaETag`, its schema's etag (P74).
    func zoneAndRecord(_ scope: DatabaseScope, zoneName: String, recordName: String, decodeFields: Bool, schemaETag: Bool) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?)? {
        try db.queryOne("""
            SELECT z.id, z.name, z.owner, z.change_seq, z.created_at, \(RecordRows.recordColumns), r.membership\(schemaETag ? ", s.etag" : "")
            FROM zones z LEFT JOIN records r ON r.zone_id = z.id AND r.name = $6\(schemaETag ? Self.schemaJoin : "")
            WHERE z.container_id = $1 AND z.environment = $2 AND z.database = $3 AND z.owner = $4 AND z.name = $5
            """, Self.scopeArguments(scope) + [.text(zoneName), .text(recordName)]) { row in
            let zone = try Self.storedZone(row)
            let etag = schemaETag ? try row.optionalString(18) : nil
            guard !row.isNull(5) else { return (zone, nil, etag) }
            return (zone, (try RecordRows.record(row, zoneID: zone.zoneID, from: 5, decodeFields: decodeFields), try row.optionalString(17)), etag)
        }
    }

    /// One statement (P75): the zone's row advanced by one change sequence, which the
    /// transaction keeps for its first `nextChangeSequence` of the zone, with the zone as it was
    /// (its `changeSequence` the one before), its record, its schema's etag, and the record's row
    /// key, or a key taken from the rows' sequence for its insert (P76; unused keys are gaps).
    func zoneRecordAndSchemaETagReservingSequence(_ scope: DatabaseScope, zoneName: String, recordName: String) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?, before: RowBefore?)? {
        let read = try db.queryOne("""
            WITH z AS (UPDATE zones SET change_seq = change_seq + 1
                WHERE container_id = $1 AND environment = $2 AND database = $3 AND owner = $4 AND name = $5
                RETURNING id, name, owner, change_seq, created_at, container_id, environment)
            SELECT z.id, z.name, z.owner, z.change_seq - 1, z.created_at, \(RecordRows.recordColumns), r.membership, s.etag, z.change_seq,
                COALESCE(r.id, nextval(pg_get_serial_sequence('records', 'id')))
            FROM z LEFT JOIN records r ON r.zone_id = z.id AND r.name = $6\(Self.schemaJoin)
            """, Self.scopeArguments(scope) + [.text(zoneName), .text(recordName)]) { row in
            let zone = try Self.storedZone(row)
            let (etag, sequence, key) = (try row.optionalString(18), try row.int64(19), try row.int64(20))
            guard !row.isNull(5) else {
                return (zone, nil as (record: Record, membership: String?)?, etag, sequence, RowBefore.absent(key: key))
            }
            let membership = try row.optionalString(17)
            return (zone, (try RecordRows.record(row, zoneID: zone.zoneID, from: 5, decodeFields: true), membership), etag, sequence,
                    RowBefore.present(key: key, membership: membership))
        }
        guard let read else { return nil }
        reservedSequence.keep(read.3, zone: read.0.key)
        return (read.0, read.1, read.2, read.4)
    }

    private static let schemaJoin = " LEFT JOIN schemas s ON s.container_id = z.container_id AND s.environment = z.environment"

    func zones(_ scope: DatabaseScope) throws -> [StoredZone] {
        try db.query("""
            SELECT \(Self.zoneColumns) FROM zones
            WHERE container_id = $1 AND environment = $2 AND database = $3 AND owner = $4 ORDER BY id
            """, Self.scopeArguments(scope), Self.storedZone)
    }

    func ensureZone(_ scope: DatabaseScope, name: String, at time: Int64) throws -> StoredZone {
        if let existing = try zone(scope, name: name) { return existing }
        // A racing writer's insert of the same zone must fail this write as retryable, not as a
        // unique violation. Having read the zone's absence is not enough: SSI turns the
        // violation into 40001 only when that read locked the unique index's page, and a small
        // table is read by a sequential scan (seen: 23505 from three writers' first creates, P39).
        // ON CONFLICT waits for the racer; a row this snapshot cannot see is then 40001, and one
        // it can see (not possible after the read above) would leave no id.
        let key = try db.queryOne("""
            INSERT INTO zones (container_id, environment, database, owner, name, change_seq, created_at)
            VALUES ($1, $2, $3, $4, $5, 0, $6) ON CONFLICT DO NOTHING RETURNING id
            """, Self.scopeArguments(scope) + [.text(name), .integer(time)]) { try $0.int64(0) }
        guard let key else { throw StoreError(.retryable, "a racing writer created zone \(name)", retryAfterSeconds: 1) }
        return StoredZone(key: key, zoneID: ZoneID(zoneName: name, ownerRecordName: scope.owner), changeSequence: 0, createdAt: time)
    }

    func deleteZone(_ zone: StoredZone) throws {
        // Index and reference rows go with their records (ON DELETE CASCADE); deleting them by
        // zone first keeps the cascade from probing row by row.
        let key: [PostgresValue] = [.integer(zone.key)]
        try db.run("DELETE FROM field_index WHERE zone_id = $1", key)
        try db.run("DELETE FROM record_references WHERE source_id IN (SELECT id FROM records WHERE zone_id = $1)", key)
        try db.run("DELETE FROM records WHERE zone_id = $1", key)
        try db.run("DELETE FROM record_changes WHERE zone_id = $1", key)
        try db.run("DELETE FROM share_exits WHERE zone_id = $1", key)
        try db.run("DELETE FROM zones WHERE id = $1", key)
    }

    /// The zone's next change sequence, taken by `UPDATE … RETURNING` on its row, so writers
    /// that take one commit in the order of their numbers (decisions P4); or the one a first
    /// read took for it (P75).
    func nextChangeSequence(_ zone: StoredZone) throws -> Int64 {
        if let reserved = reservedSequence.take(zone: zone.key) { return reserved }
        guard let next = try db.queryOne("UPDATE zones SET change_seq = change_seq + 1 WHERE id = $1 RETURNING change_seq",
                                         [.integer(zone.key)], { try $0.int64(0) }) else {
            throw StoreError(.internal, "zone \(zone.key) vanished")
        }
        return next
    }
}
