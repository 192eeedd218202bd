internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Share participants (SQLite: `SQLiteStore+Shares.swift`); the rest of sharing is still in
/// `PostgresStore+NotYetTranslated.swift`.
extension PostgresStoreTransaction {
    func acceptedParticipants(zone: StoredZone) throws -> [String] {
        try db.query("""
            SELECT DISTINCT p.user_record_name FROM share_participants p JOIN shares s ON s.id = p.share_id
            WHERE s.zone_id = $1 AND p.status = 'ACCEPTED' AND p.user_record_name IS NOT NULL ORDER BY 1
            """, [.integer(zone.key)]) { try $0.string(0) }
    }
}
