internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// The zone change log: each record's latest change and its exits from shares (SQLite:
/// `SQLiteStore+Feeds.swift`).
extension PostgresStoreTransaction {
    /// Records a record's latest change (and, when it left a share, its exit from it).
    func logChange(zone: StoredZone, name: String, type: String, sequence: Int64, deleted: Bool, membership: String?,
                   previousMembership: String?, at time: Int64) throws {
        try db.runDeferred("""
            INSERT INTO record_changes (zone_id, record_name, seq, record_type, deleted, membership, changed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET seq = excluded.seq, record_type = excluded.record_type,
                deleted = excluded.deleted, membership = excluded.membership, changed_at = excluded.changed_at
            """, [.integer(zone.key), .text(name), .integer(sequence), .text(type), .integer(deleted ? 1 : 0),
                  .optional(membership), .integer(time)])
        changeLog.append(LoggedChange(zoneKey: zone.key, recordName: name, recordType: type, deleted: deleted, membership: membership,
                                      previousMembership: previousMembership == membership ? nil : previousMembership))
        if let previousMembership, previousMembership != membership {
            try db.runDeferred("""
                INSERT INTO share_exits (zone_id, share, record_name, record_type, seq, changed_at) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (zone_id, share, record_name) DO UPDATE SET record_type = excluded.record_type, seq = excluded.seq,
                    changed_at = excluded.changed_at
                """, [.integer(zone.key), .text(previousMembership), .text(name), .text(type), .integer(sequence), .integer(time)])
        }
    }

    /// Moves records (id, name, type, old membership) to `membership`: each gets its own new
    /// zone sequence, so every viewer's feed shows the move exactly once.
    func moveRecords(_ rows: [(id: Int64, name: String, type: String, old: String?)], zone: StoredZone, to membership: String?) throws {
        guard !rows.isEmpty else { return }
        guard let last = try db.queryOne("UPDATE zones SET change_seq = change_seq + $1 WHERE id = $2 RETURNING change_seq",
                                         [.integer(Int64(rows.count)), .integer(zone.key)], { try $0.int64(0) }) else { return }
        let base = last - Int64(rows.count)
        let now = Clock.milliseconds()
        for (index, row) in rows.enumerated() {
            try db.runDeferred("UPDATE records SET membership = $1 WHERE id = $2", [.optional(membership), .integer(row.id)])
            try logChange(zone: zone, name: row.name, type: row.type, sequence: base + Int64(index) + 1, deleted: false,
                          membership: membership, previousMembership: row.old, at: now)
        }
    }
}
