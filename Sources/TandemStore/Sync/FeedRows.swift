package import TandemCore

/// Zone and database feed rows as both stores select them (decisions P44).
package enum FeedRows {
    /// A zone change page's row: `c.record_name, c.record_type, c.seq, c.deleted`, then
    /// `RecordRows.recordColumns` (NULL when the record is gone), then `r.membership`. The
    /// record is nil for a deletion or a share exit.
    package static func zoneChange(_ row: some StoredRow, zoneID: ZoneID,
                                   decodeFields: Bool) throws -> (change: ZoneChange, record: Record?, membership: String?) {
        let change = ZoneChange(recordName: try row.string(0), recordType: try row.string(1), sequence: try row.int64(2),
                                deleted: try row.flag(3))
        guard !change.deleted, !row.isNull(4) else { return (change, nil, nil) }
        return (change, try RecordRows.record(row, zoneID: zoneID, from: 4, decodeFields: decodeFields), try row.optionalString(16))
    }

    /// A database feed's row: zone key, zone name, owner, sequence, deleted flag, reason.
    package static func databaseChange(_ row: some StoredRow) throws -> DatabaseChange {
        DatabaseChange(zoneKey: try row.int64(0), zoneID: ZoneID(zoneName: try row.string(1), ownerRecordName: try row.string(2)),
                       sequence: try row.int64(3), deleted: try row.flag(4), reason: try row.optionalString(5))
    }
}
