import Foundation
import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    static let recordColumns = """
        r.name, r.type, r.change_tag, r.fields, r.created_at, r.created_by, r.created_device, \
        r.modified_at, r.modified_by, r.modified_device, r.parent, r.share
        """

    /// Decodes a row selected with `recordColumns`.
    static func record(_ row: SQLiteStatement, zoneID: ZoneID) -> Record {
        record(row, zoneID: zoneID, from: 0, decodeFields: true)
    }

    /// Decodes `recordColumns` starting at column `from` (`decodeFields`: `StoredFields.attach`).
    static func record(_ row: SQLiteStatement, zoneID: ZoneID, from i: Int32, decodeFields: Bool) -> Record {
        var record = Record(recordName: row.text(i), recordType: row.text(i + 1), recordChangeTag: row.text(i + 2), fields: [:],
                            zoneID: zoneID,
                            created: Record.Stamp(timestamp: row.int64(i + 4), userRecordName: row.text(i + 5), deviceID: row.text(i + 6)),
                            modified: Record.Stamp(timestamp: row.int64(i + 7), userRecordName: row.text(i + 8), deviceID: row.text(i + 9)),
                            parent: optionalText(row, i + 10), share: optionalText(row, i + 11))
        StoredFields.attach(row.blob(i + 3), to: &record, decodeFields: decodeFields)
        return record
    }

    func record(zone: StoredZone, name: String) throws -> Record? {
        try db.queryOne("SELECT \(Self.recordColumns) FROM records r WHERE r.zone_id = ? AND r.name = ?",
                        [.integer(zone.key), .text(name)]) { Self.record($0, zoneID: zone.zoneID) }
    }

    func referrers(zone: StoredZone, recordName: String) throws -> [Referrer] {
        try db.query("""
            SELECT r.name, x.action FROM record_references x JOIN records r ON r.id = x.source_id
            WHERE x.target_zone = ? AND x.target_name = ?
            """, [.integer(zone.key), .text(recordName)]) { row in
            Referrer(recordName: row.text(0), action: Reference.Action(rawValue: row.text(1)) ?? .none)
        }
    }

    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?) throws {
        let created = record.created ?? record.modified!
        let modified = record.modified ?? created
        let existing = try db.queryOne("SELECT id, membership FROM records WHERE zone_id = ? AND name = ?",
                                       [.integer(zone.key), .text(record.recordName)]) { ($0.int64(0), Self.optionalText($0, 1)) }
        let existingID = existing?.0
        let arguments: [SQLiteValue] = [
            .text(record.recordType), .text(record.recordChangeTag ?? ""), .integer(sequence), .blob(StoredFields.encode(record.fields)),
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
            try db.run("DELETE FROM field_search WHERE rowid = ?", [.integer(existingID)])
            try db.run("DELETE FROM record_references WHERE source_id = ?", [.integer(existingID)])
            recordID = existingID
        } else {
            try db.run("""
                INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
                modified_at, modified_by, modified_device, parent, share, membership, zone_id, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments + [.integer(zone.key), .text(record.recordName)])
            recordID = db.lastInsertRowID
        }
        try writeIndexEntries(recordID: recordID, zoneKey: zone.key, recordType: record.recordType, fields: record.fields,
                              indexing: try indexing(zoneKey: zone.key, recordType: record.recordType))
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
