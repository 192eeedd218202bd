internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// The zone change log: each record's latest change and its exits from shares (SQLite:
/// `SQLiteStore+Feeds.swift`).
extension PostgresStoreTransaction {
    /// Records a record's latest change (and, when it left a share, its exit from it).
    func logChange(zone: StoredZone, name: String, type: String, sequence: Int64, deleted: Bool, membership: String?,
                   previousMembership: String?, at time: Int64) throws {
        try db.run("""
            INSERT INTO record_changes (zone_id, record_name, seq, record_type, deleted, membership, changed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET seq = excluded.seq, record_type = excluded.record_type,
                deleted = excluded.deleted, membership = excluded.membership, changed_at = excluded.changed_at
            """, [.integer(zone.key), .text(name), .integer(sequence), .text(type), .integer(deleted ? 1 : 0),
                  .optional(membership), .integer(time)])
        changeLog.append(LoggedChange(zoneKey: zone.key, recordName: name, recordType: type, deleted: deleted, membership: membership,
                                      previousMembership: previousMembership == membership ? nil : previousMembership))
        if let previousMembership, previousMembership != membership {
            try db.run("""
                INSERT INTO share_exits (zone_id, share, record_name, record_type, seq, changed_at) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (zone_id, share, record_name) DO UPDATE SET record_type = excluded.record_type, seq = excluded.seq,
                    changed_at = excluded.changed_at
                """, [.integer(zone.key), .text(previousMembership), .text(name), .text(type), .integer(sequence), .integer(time)])
        }
    }
}
