internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// What account deletion reads and its last step (decisions A15; SQLite:
/// `SQLiteStore+AccountDeletion.swift`).
extension PostgresStoreTransaction {
    func participations(user: String) throws -> [Participation] {
        try db.query("""
            SELECT \(ShareRows.shareColumns), z.container_id, z.environment, \(ShareRows.participantColumns)
            FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
            WHERE p.user_record_name = $1 AND p.status != 'REMOVED' ORDER BY z.id, s.id, p.id
            """, [.text(user)]) { row in
            Participation(share: try ShareRows.share(row), participant: try ShareRows.participant(row, from: 14),
                          container: try row.string(12), environment: Environment(rawValue: try row.string(13)) ?? .development)
        }
    }

    func privateZones(owner: String) throws -> [OwnedZone] {
        try db.query("""
            SELECT \(Self.zoneColumns), container_id, environment FROM zones WHERE owner = $1 AND database = 'private' ORDER BY id
            """, [.text(owner)]) { row in
            OwnedZone(zone: try Self.storedZone(row), container: try row.string(5),
                      environment: Environment(rawValue: try row.string(6)) ?? .development)
        }
    }

    func recordCount(zone: StoredZone) throws -> Int {
        Int(try db.queryOne("SELECT count(*) FROM records WHERE zone_id = $1", [.integer(zone.key)]) { try $0.int64(0) } ?? 0)
    }

    func eraseAccount(user: String, at time: Int64) throws -> Int {
        let sessions = try db.queryOne("""
            SELECT count(*) FROM tokens WHERE user_record_name = $1 AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
            AND (expires_at IS NULL OR expires_at > $2)
            """, [.text(user), .integer(time)]) { try $0.int64(0) } ?? 0
        try db.run("UPDATE tokens SET revoked_at = $1 WHERE user_record_name = $2 AND revoked_at IS NULL", [.integer(time), .text(user)])
        let email = try db.queryOne("SELECT email FROM users WHERE record_name = $1", [.text(user)]) { try $0.optionalString(0) } ?? nil
        try db.run("UPDATE console_sessions SET revoked_at = $1 WHERE user_record_name = $2 AND revoked_at IS NULL",
                   [.integer(time), .text(user)])
        try db.run("DELETE FROM sign_in_methods WHERE user_record_name = $1", [.text(user)])
        try db.run("DELETE FROM container_consents WHERE user_record_name = $1", [.text(user)])
        // Emails compare folding ASCII letters only, as SQLite's NOCASE (`tandem_fold`, P79).
        try db.run("DELETE FROM account_links WHERE user_record_name = $1 OR tandem_fold(email) = tandem_fold($2)", [.text(user), .optional(email)])
        try db.run("DELETE FROM asset_uploads WHERE owner = $1", [.text(user)])
        try db.run("DELETE FROM subscriptions WHERE owner = $1", [.text(user)])
        try db.run("""
            UPDATE users SET email = NULL, given_name = NULL, family_name = NULL, phone = NULL, display_name = NULL,
            discoverable = 0, email_verified = 0, server_admin = 0, deleted_at = $1 WHERE record_name = $2
            """, [.integer(time), .text(user)])
        return Int(sessions)
    }
}
