import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func recordLog(zone: StoredZone, name: String) throws -> [RecordLogEntry] {
        // The latest change by primary key; exits through the (zone, share, record) key within the zone.
        try db.query("""
            SELECT CASE deleted WHEN 1 THEN 'deleted' ELSE 'saved' END, seq, changed_at, record_type FROM record_changes
            WHERE zone_id = ?1 AND record_name = ?2
            UNION ALL
            SELECT 'leftShare', seq, changed_at, record_type FROM share_exits WHERE zone_id = ?1 AND record_name = ?2
            ORDER BY 2 DESC
            """, [.integer(zone.key), .text(name)]) { row in
            RecordLogEntry(kind: RecordLogEntry.Kind(rawValue: row.text(0)) ?? .saved, sequence: row.int64(1), changedAt: row.int64(2),
                           recordType: row.text(3))
        }
    }
}
