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

    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?) throws {
        let created = record.created ?? record.modified!
        let modified = record.modified ?? created
        let existing = try db.queryOne("SELECT id, membership FROM records WHERE zone_id = $1 AND name = $2",
                                       [.integer(zone.key), .text(record.recordName)]) { (try $0.int64(0), try $0.optionalString(1)) }
        let arguments: [PostgresValue] = [
            .text(record.recordType), .text(record.recordChangeTag ?? ""), .integer(sequence), .bytes(StoredFields.encode(record.fields)),
            .integer(created.timestamp), .text(created.userRecordName), .text(created.deviceID),
            .integer(modified.timestamp), .text(modified.userRecordName), .text(modified.deviceID),
            .optional(record.parent), .optional(record.share), .optional(membership),
        ]
        let recordID: Int64
        if let existing {
            try db.runDeferred("""
                UPDATE records SET type = $1, change_tag = $2, change_seq = $3, fields = $4, created_at = $5, created_by = $6,
                created_device = $7, modified_at = $8, modified_by = $9, modified_device = $10, parent = $11, share = $12,
                membership = $13 WHERE id = $14
                """, arguments + [.integer(existing.0)])
            try db.runDeferred("DELETE FROM field_index WHERE record_id = $1", [.integer(existing.0)])
            try db.runDeferred("DELETE FROM field_search WHERE record_id = $1", [.integer(existing.0)])
            try db.runDeferred("DELETE FROM record_references WHERE source_id = $1", [.integer(existing.0)])
            recordID = existing.0
        } else {
            guard let id = try db.queryOne("""
                INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
                modified_at, modified_by, modified_device, parent, share, membership, zone_id, name)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id
                """, arguments + [.integer(zone.key), .text(record.recordName)], { try $0.int64(0) }) else {
                throw StoreError(.internal, "INSERT INTO records returned no id")
            }
            recordID = id
        }
        try writeIndexEntries(recordID: recordID, zoneKey: zone.key, recordType: record.recordType, fields: record.fields,
                              indexing: try indexing(zoneKey: zone.key, recordType: record.recordType))
        // References never leave their zone (CloudKit's rule, enforced by the records service).
        for reference in FieldIndexer.references(in: record.fields) {
            try db.runDeferred("INSERT INTO record_references (source_id, target_zone, target_name, action) VALUES ($1, $2, $3, $4)",
                       [.integer(recordID), .integer(zone.key), .text(reference.recordName), .text(reference.action.rawValue)])
        }
        try logChange(zone: zone, name: record.recordName, type: record.recordType, sequence: sequence, deleted: false,
                      membership: membership, previousMembership: existing?.1, at: modified.timestamp)
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
