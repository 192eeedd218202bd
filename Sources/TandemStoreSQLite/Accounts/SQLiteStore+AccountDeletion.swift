import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func participations(user: String) throws -> [Participation] {
        try db.query("""
            SELECT \(ShareRows.shareColumns), z.container_id, z.environment, p.participant_id
            FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
            WHERE p.user_record_name = ? AND p.status != 'REMOVED' ORDER BY z.id, s.id
            """, [.text(user)]) { row in
            (try ShareRows.share(row), row.text(12), Environment(rawValue: row.text(13)) ?? .development, row.text(14))
        }.compactMap { share, container, environment, participantID in
            guard let participant = try participants(share: share).first(where: { $0.participantID == participantID }) else { return nil }
            return Participation(share: share, participant: participant, container: container, environment: environment)
        }
    }

    func privateZones(owner: String) throws -> [OwnedZone] {
        try db.query("""
            SELECT \(Self.zoneColumns), container_id, environment FROM zones WHERE owner = ? AND database = 'private' ORDER BY id
            """, [.text(owner)]) { row in
            OwnedZone(zone: Self.storedZone(row), container: row.text(5), environment: Environment(rawValue: row.text(6)) ?? .development)
        }
    }

    func recordCount(zone: StoredZone) throws -> Int {
        Int(try db.queryOne("SELECT count(*) FROM records WHERE zone_id = ?", [.integer(zone.key)]) { $0.int64(0) } ?? 0)
    }

    func eraseAccount(user: String, at time: Int64) throws -> Int {
        let sessions = try db.queryOne("""
            SELECT count(*) FROM tokens WHERE user_record_name = ? AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
            AND (expires_at IS NULL OR expires_at > ?)
            """, [.text(user), .integer(time)]) { $0.int64(0) } ?? 0
        try db.run("UPDATE tokens SET revoked_at = ? WHERE user_record_name = ? AND revoked_at IS NULL", [.integer(time), .text(user)])
        let email = try db.queryOne("SELECT email FROM users WHERE record_name = ?", [.text(user)]) { Self.optionalText($0, 0) } ?? nil
        try db.run("UPDATE console_sessions SET revoked_at = ? WHERE user_record_name = ? AND revoked_at IS NULL", [.integer(time), .text(user)])
        try db.run("DELETE FROM sign_in_methods WHERE user_record_name = ?", [.text(user)])
        try db.run("DELETE FROM container_consents WHERE user_record_name = ?", [.text(user)])
        try db.run("DELETE FROM account_links WHERE user_record_name = ? OR email = ?", [.text(user), email.map(SQLiteValue.text) ?? .null])
        try db.run("DELETE FROM asset_uploads WHERE owner = ?", [.text(user)])
        try db.run("DELETE FROM subscriptions WHERE owner = ?", [.text(user)])
        try db.run("""
            UPDATE users SET email = NULL, given_name = NULL, family_name = NULL, phone = NULL, display_name = NULL,
            discoverable = 0, email_verified = 0, server_admin = 0, deleted_at = ? WHERE record_name = ?
            """, [.integer(time), .text(user)])
        return Int(sessions)
    }
}
