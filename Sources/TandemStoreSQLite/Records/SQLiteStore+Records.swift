import Foundation
import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func record(zone: StoredZone, name: String) throws -> Record? {
        try db.queryOne("SELECT \(RecordRows.recordColumns) FROM records r WHERE r.zone_id = ? AND r.name = ?",
                        [.integer(zone.key), .text(name)]) { try RecordRows.record($0, zoneID: zone.zoneID) }
    }

    func referrers(zone: StoredZone, recordName: String) throws -> [Referrer] {
        try db.query("""
            SELECT r.name, x.action FROM record_references x JOIN records r ON r.id = x.source_id
            WHERE x.target_zone = ? AND x.target_name = ?
            """, [.integer(zone.key), .text(recordName)]) { row in
            Referrer(recordName: row.text(0), action: Reference.Action(rawValue: row.text(1)) ?? .none)
        }
    }

    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?, indexing known: [String: IndexOptions]?,
                   before _: RowBefore?) throws {
        let created = record.created ?? record.modified!
        let modified = record.modified ?? created
        let existing = try db.queryOne("SELECT id, membership FROM records WHERE zone_id = ? AND name = ?",
                                       [.integer(zone.key), .text(record.recordName)]) { ($0.int64(0), Self.optionalText($0, 1)) }
        let existingID = existing?.0
        let arguments: [SQLiteValue] = [
            .text(record.recordType), .text(record.recordChangeTag ?? ""), .integer(sequence), .blob(StoredFields.bytes(of: record)),
            .integer(created.timestamp), .text(created.userRecordName), .text(created.deviceID),
            .integer(modified.timestamp), .text(modified.userRecordName), .text(modified.deviceID),
            record.parent.map(SQLiteValue.text) ?? .null, record.share.map(SQLiteValue.text) ?? .null,
            membership.map(SQLiteValue.text) ?? .null,
        ]
        let recordID: Int64
        if let existingID {
            try db.run("""
                UPDATE records SET type = ?, change_tag = ?, change_seq = ?, fields = ?, created_at = ?, created_by = ?,
                created_device = ?, modified_at = ?, modified_by = ?, modified_device = ?, parent = ?, share = ?, membership = ? WHERE id = ?
                """, arguments + [.integer(existingID)])
            try db.run("DELETE FROM field_index WHERE record_id = ?", [.integer(existingID)])
            try db.run("DELETE FROM record_references WHERE source_id = ?", [.integer(existingID)])
            recordID = existingID
        } else {
            try db.run("""
                INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
                modified_at, modified_by, modified_device, parent, share, membership, zone_id, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments + [.integer(zone.key), .text(record.recordName)])
            recordID = db.lastInsertRowID
        }
        try writeIndexEntries(recordID: recordID, zoneKey: zone.key, recordType: record.recordType,
                              version: (record.recordName, record.recordChangeTag ?? ""), replacing: existingID != nil, fields: record.fields,
                              indexing: try known ?? indexing(zoneKey: zone.key, recordType: record.recordType))
        // References never leave their zone (CloudKit's rule, enforced by the records service).
        for reference in FieldIndexer.references(in: record.fields) {
            try db.run("INSERT INTO record_references (source_id, target_zone, target_name, action) VALUES (?, ?, ?, ?)",
                       [.integer(recordID), .integer(zone.key), .text(reference.recordName), .text(reference.action.rawValue)])
        }
        try logChange(zone: zone, name: record.recordName, type: record.recordType, sequence: sequence, deleted: false,
                      membership: membership, previousMembership: existing?.1 ?? nil, at: modified.timestamp)
    }

    func deleteRecord(name: String, recordType: String, zone: StoredZone, sequence: Int64) throws {
        var membership: String?
        if let (id, stored) = try db.queryOne("SELECT id, membership FROM records WHERE zone_id = ? AND name = ?",
                                              [.integer(zone.key), .text(name)], { ($0.int64(0), Self.optionalText($0, 1)) }) {
            membership = stored
            try db.run("DELETE FROM field_index WHERE record_id = ?", [.integer(id)])
            try db.run("DELETE FROM record_references WHERE source_id = ?", [.integer(id)])
            try db.run("DELETE FROM records WHERE id = ?", [.integer(id)])
        }
        // The tombstone keeps the share the record was in, so only that share's participants see it.
        try logChange(zone: zone, name: name, type: recordType, sequence: sequence, deleted: true, membership: membership,
                      previousMembership: nil, at: Clock.milliseconds())
    }
}
