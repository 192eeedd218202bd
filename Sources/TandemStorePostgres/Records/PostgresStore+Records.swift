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
        let row: RecordRow
        let previous: RowBefore
        if let before {
            // Known: the upsert goes with the next statement that waits, and the rows that hang
            // on the record find it by zone and name (decisions P76).
            try db.runDeferred(Self.upsert, arguments)
            row = .named(record.recordName)
            previous = before
        } else {
            // One round trip (decisions P73): the row as it was (a WITH query reads the snapshot
            // the statement started from) and the upsert. An update keeps its row id, as before.
            guard let saved = try db.queryOne("""
                WITH previous AS (SELECT id, membership FROM records WHERE zone_id = $14 AND name = $15),
                saved AS (\(Self.upsert) RETURNING id)
                SELECT saved.id, previous.id IS NOT NULL, previous.membership FROM saved LEFT JOIN previous ON true
                """, arguments, { (id: try $0.int64(0), existed: try $0.bool(1), membership: try $0.optionalString(2)) }) else {
                throw StoreError(.internal, "INSERT INTO records returned no id")
            }
            row = .id(saved.id)
            previous = saved.existed ? .present(membership: saved.membership) : .absent
        }
        if case .present = previous {
            for table in ["field_index", "field_search"] {
                try db.runDeferred("DELETE FROM \(table) WHERE record_id = \(row.id(parameter: 1, zoneParameter: 2))", row.arguments(zone: zone.key))
            }
            try db.runDeferred("DELETE FROM record_references WHERE source_id = \(row.id(parameter: 1, zoneParameter: 2))", row.arguments(zone: zone.key))
        }
        try writeIndexEntries(row: row, zoneKey: zone.key, recordType: record.recordType, fields: record.fields,
                              indexing: try known ?? indexing(zoneKey: zone.key, recordType: record.recordType))
        // References never leave their zone (CloudKit's rule, enforced by the records service).
        for reference in FieldIndexer.references(in: record.fields) {
            try db.runDeferred("""
                INSERT INTO record_references (source_id, target_zone, target_name, action)
                VALUES (\(row.id(parameter: 1, zoneParameter: 2)), $2, $3, $4)
                """, [row.argument, .integer(zone.key), .text(reference.recordName), .text(reference.action.rawValue)])
        }
        let previousMembership: String? = if case .present(let membership) = previous { membership } else { nil }
        try logChange(zone: zone, name: record.recordName, type: record.recordType, sequence: sequence, deleted: false,
                      membership: membership, previousMembership: previousMembership, at: modified.timestamp)
    }

    /// A record's insert, or its update when the zone has it: `$1`–`$15` as `putRecord`'s arguments.
    private static let upsert = """
        INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
        modified_at, modified_by, modified_device, parent, share, membership, zone_id, name)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
        ON CONFLICT (zone_id, name) DO UPDATE SET type = excluded.type, change_tag = excluded.change_tag,
        change_seq = excluded.change_seq, fields = excluded.fields, created_at = excluded.created_at,
        created_by = excluded.created_by, created_device = excluded.created_device, modified_at = excluded.modified_at,
        modified_by = excluded.modified_by, modified_device = excluded.modified_device, parent = excluded.parent,
        share = excluded.share, membership = excluded.membership
        """

    func deleteRecord(name: String, recordType: String, zone: StoredZone, sequence: Int64) throws {
        // Index, search and reference rows go with the record (ON DELETE CASCADE).
        let membership = try db.queryOne("DELETE FROM records WHERE zone_id = $1 AND name = $2 RETURNING membership",
                                          [.integer(zone.key), .text(name)]) { try $0.optionalString(0) } ?? nil
        // The tombstone keeps the share the record was in, so only that share's participants see it.
        try logChange(zone: zone, name: name, type: recordType, sequence: sequence, deleted: true, membership: membership,
                      previousMembership: nil, at: Clock.milliseconds())
    }
}

/// A record's row in the statements that hang on it (index, search and reference rows): by its
/// id, or, while its save is still deferred (P76), by its name in the statement's zone.
enum RecordRow {
    case id(Int64)
    case named(String)

    /// The id's SQL: parameter `parameter` itself, or the row of that name in the zone that
    /// `zoneParameter` holds (a statement that names a zone anyway).
    func id(parameter: Int, zoneParameter: Int) -> String {
        switch self {
        case .id: "$\(parameter)"
        case .named: "(SELECT id FROM records WHERE zone_id = $\(zoneParameter) AND name = $\(parameter))"
        }
    }

    /// The value of `id(parameter:zoneParameter:)`'s `parameter`.
    var argument: PostgresValue {
        switch self {
        case .id(let id): .integer(id)
        case .named(let name): .text(name)
        }
    }

    /// `argument`, then the zone: the arguments of a statement that needs nothing else.
    func arguments(zone: Int64) -> [PostgresValue] {
        switch self {
        case .id(let id): [.integer(id)]
        case .named(let name): [.text(name), .integer(zone)]
        }
    }
}
