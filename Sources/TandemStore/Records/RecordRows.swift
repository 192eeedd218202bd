package import TandemCore

/// Records as both stores select them: the column lists and the decoders that read
/// them, kept together so a column's position is stated once (decisions P44).
package enum RecordRows {
    /// A record's columns, `records r`; `record(_:zoneID:from:decodeFields:)` reads them.
    package static let recordColumns = """
        r.name, r.type, r.change_tag, r.fields, r.created_at, r.created_by, r.created_device, \
        r.modified_at, r.modified_by, r.modified_device, r.parent, r.share
        """

    /// Decodes `recordColumns` starting at column `from` (`decodeFields`: `StoredFields.attach`).
    package static func record(_ row: some StoredRow, zoneID: ZoneID, from i: Int = 0, decodeFields: Bool = true) throws -> Record {
        var record = Record(recordName: try row.string(i), recordType: try row.string(i + 1), recordChangeTag: try row.string(i + 2),
                            fields: [:], zoneID: zoneID,
                            created: Record.Stamp(timestamp: try row.int64(i + 4), userRecordName: try row.string(i + 5),
                                                  deviceID: try row.string(i + 6)),
                            modified: Record.Stamp(timestamp: try row.int64(i + 7), userRecordName: try row.string(i + 8),
                                                   deviceID: try row.string(i + 9)),
                            parent: try row.optionalString(i + 10), share: try row.optionalString(i + 11))
        StoredFields.attach(try row.bytes(i + 3), to: &record, decodeFields: decodeFields)
        return record
    }
}
