internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Records, their references and their field index rows (SQLite: `SQLiteStore+Records.swift`).
extension PostgresStoreTransaction {
    func record(zone: StoredZone, name: String) throws -> Record? {
        try db.queryOne("SELECT \(RecordRows.recordColumns) FROM records r WHERE r.zone_id = $1 AND r.name = $2",
                        [.integer(zone.key), .text(name)]) { try RecordRows.record($0, zoneID: zone.zoneID) }
    }

    func referrers(zone: StoredZone, recordName: String) throws -> [Referrer] {
        try db.query("""
            SELECT r.name, x.action FROM record_references x JOIN records r ON r.id = x.source_id
            WHERE x.target_zone = $1 AND x.target_name = $2 ORDER BY x.source_id
            """, [.integer(zone.key), .text(recordName)]) { row in
            Referrer(recordName: try row.string(0), action: Reference.Action(rawValue: try row.string(1)) ?? .none)
        }
    }

    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?, indexing known: [String: IndexOptions]?) throws {
        let created = record.created ?? record.modified!
        let modified = record.modified ?? created
        let arguments: [PostgresValue] = [
            .text(record.recordType), .text(record.recordChangeTag ?? ""), .integer(sequence), .bytes(StoredFields.bytes(of: record)),
            .integer(created.timestamp), .text(created.userRecordName), .text(created.deviceID),
            .integer(modified.timestamp), .text(modified.userRecordName), .text(modified.deviceID),
            .optional(record.parent), .optional(record.share), .optional(membership), .integer(zone.key), .text(record.recordName),
        ]
        // One round trip (decisions P73): the row as it was (a WITH query reads the snapshot the
        // statement started from) and the upsert. An update keeps its row id, as before.
        guard let saved = try db.queryOne("""
            WITH previous AS (SELECT id, membership FROM records WHERE zone_id = $14 AND name = $15),
            saved AS (
                INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
                modified_at, modified_by, modified_device, parent, share, membership, zone_id, name)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
                ON CONFLICT (zone_id, name) DO UPDATE SET type = excluded.type, change_tag = excluded.change_tag,
                change_seq = excluded.change_seq, fields = excluded.fields, created_at = excluded.created_at,
                created_by = excluded.created_by, created_device = excluded.created_device, modified_at = excluded.modified_at,
                modified_by = excluded.modified_by, modified_device = excluded.modified_device, parent = excluded.parent,
                share = excluded.share, membership = excluded.membership
                RETURNING id)
            SELECT saved.id, previous.id IS NOT NULL, previous.membership FROM saved LEFT JOIN previous ON true
            """, arguments, { (id: try $0.int64(0), existed: try $0.bool(1), membership: try $0.optionalString(2)) }) else {
            throw StoreError(.internal, "INSERT INTO records returned no id")
        }
        let recordID = saved.id
        if saved.existed {
            try db.runDeferred("DELETE FROM field_index WHERE record_id = $1", [.integer(recordID)])
            try db.runDeferred("DELETE FROM field_search WHERE record_id = $1", [.integer(recordID)])
            try db.runDeferred("DELETE FROM record_references WHERE source_id = $1", [.integer(recordID)])
        }
        try writeIndexEntries(recordID: recordID, zoneKey: zone.key, recordType: record.recordType, fields: record.fields,
                              indexing: try known ?? indexing(zoneKey: zone.key, recordType: record.recordType))
        // References never leave their zone (CloudKit's rule, enforced by the records service).
        for reference in FieldIndexer.references(in: record.fields) {
            try db.runDeferred("INSERT INTO record_references (source_id, target_zone, target_name, action) VALUES ($1, $2, $3, $4)",
                       [.integer(recordID), .integer(zone.key), .text(reference.recordName), .text(reference.action.rawValue)])
        }
        try logChange(zone: zone, name: record.recordName, type: record.recordType, sequence: sequence, deleted: false,
                      membership: membership, previousMembership: saved.existed ? saved.membership : nil, at: modified.timestamp)
    }

    func deleteRecord(name: String, recordType: String, zone: StoredZone, sequence: Int64) throws {
        // Index, search and reference rows go with the record (ON DELETE CASCADE).
        let membership = try db.queryOne("DELETE FROM records WHERE zone_id = $1 AND name = $2 RETURNING membership",
                                          [.integer(zone.key), .text(name)]) { try $0.optionalString(0) } ?? nil
        // The tombstone keeps the share the record was in, so only that share's participants see it.
        try logChange(zone: zone, name: name, type: recordType, sequence: sequence, deleted: true, membership: membership,
                      previousMembership: nil, at: Clock.milliseconds())
    }
}
