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

    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?, indexing known: [String: IndexOptions]?,
                   before: RowBefore?) throws {
        let created = record.created ?? record.modified!
        let modified = record.modified ?? created
        let arguments: [PostgresValue] = [
            .text(record.recordType), .text(record.recordChangeTag ?? ""), .integer(sequence), .bytes(StoredFields.bytes(of: record)),
            .integer(created.timestamp), .text(created.userRecordName), .text(created.deviceID),
            .integer(modified.timestamp), .text(modified.userRecordName), .text(modified.deviceID),
            .optional(record.parent), .optional(record.share), .optional(membership), .integer(zone.key), .text(record.recordName),
        ]
        let recordID: Int64
        let existed: Bool
        let previousMembership: String?
        if let before {
            // Known from the write's first read (decisions P76): the upsert, with the key that
            // read took for a new row, goes with the next statement that waits.
            try db.runDeferred(Self.upsertWithKey, arguments + [.integer(before.key)])
            recordID = before.key
            switch before {
            case .absent: (existed, previousMembership) = (false, nil)
            case .present(_, let membership): (existed, previousMembership) = (true, membership)
            }
        } else {
            // One round trip (decisions P73): the row as it was and the upsert.
            guard let saved = try db.queryOne(Self.upsertReturningPrevious, arguments, { (id: try $0.int64(0), existed: try $0.bool(1), membership: try $0.optionalString(2)) }) else {
                throw StoreError(.internal, "INSERT INTO records returned no id")
            }
            (recordID, existed, previousMembership) = (saved.id, saved.existed, saved.existed ? saved.membership : nil)
        }
        if existed {
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
                      membership: membership, previousMembership: previousMembership, at: modified.timestamp)
    }

    /// The upsert with the row's key as `$16` (P76): a new row takes it; an existing row keeps its own.
    private static let upsertWithKey = upsert(columns: "id, ", values: "$16, ")

    /// The upsert returning the row's id, whether it existed and its membership before (P73): a
    /// WITH query reads the snapshot its statement started from. An update keeps its row id.
    private static let upsertReturningPrevious = """
        WITH previous AS (SELECT id, membership FROM records WHERE zone_id = $14 AND name = $15),
        saved AS (\(upsert(columns: "", values: "")) RETURNING id)
        SELECT saved.id, previous.id IS NOT NULL, previous.membership FROM saved LEFT JOIN previous ON true
        """

    /// A record's insert, or its update when the zone has it: `$1`–`$15` as `putRecord`'s
    /// arguments, and `columns` and `values` first.
    private static func upsert(columns: String, values: String) -> String {
        """
        INSERT INTO records (\(columns)type, change_tag, change_seq, fields, created_at, created_by, created_device,
        modified_at, modified_by, modified_device, parent, share, membership, zone_id, name)
        VALUES (\(values)$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
        ON CONFLICT (zone_id, name) DO UPDATE SET type = excluded.type, change_tag = excluded.change_tag,
        change_seq = excluded.change_seq, fields = excluded.fields, created_at = excluded.created_at,
        created_by = excluded.created_by, created_device = excluded.created_device, modified_at = excluded.modified_at,
        modified_by = excluded.modified_by, modified_device = excluded.modified_device, parent = excluded.parent,
        share = excluded.share, membership = excluded.membership
        """
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
