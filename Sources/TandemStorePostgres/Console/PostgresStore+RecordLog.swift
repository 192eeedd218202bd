internal import TandemPostgres
internal import TandemStore

/// The console's record page: what the change log holds for one record (decisions C23; SQLite:
/// `SQLiteStore+RecordLog.swift`).
extension PostgresStoreTransaction {
    func recordLog(zone: StoredZone, name: String) throws -> [RecordLogEntry] {
        // The latest change by primary key; exits through the (zone, share, record) key within the zone.
        try db.query("""
            SELECT CASE deleted WHEN 1 THEN 'deleted' ELSE 'saved' END, seq, changed_at, record_type FROM record_changes
            WHERE zone_id = $1 AND record_name = $2
            UNION ALL
            SELECT 'leftShare', seq, changed_at, record_type FROM share_exits WHERE zone_id = $1 AND record_name = $2
            ORDER BY 2 DESC
            """, [.integer(zone.key), .text(name)]) { row in
            RecordLogEntry(kind: RecordLogEntry.Kind(rawValue: try row.string(0)) ?? .saved, sequence: try row.int64(1),
                           changedAt: try row.int64(2), recordType: try row.string(3))
        }
    }
}
