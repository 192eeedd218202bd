import TandemCore
import TandemSQLite
import TandemStore

/// Activity invitations (decisions R19–R21; PostgreSQL: `PostgresStore+ActivityInvitations.swift`).
extension SQLiteStoreTransaction {
    func activityInvitation(hash: [UInt8]) throws -> StoredActivityInvitation? {
        try db.queryOne("""
            SELECT id, container_id, environment, conversation_id, creator, activity, created_at, expires_at, revoked_at
            FROM activity_invitations WHERE token_hash = ? OR code_hash = ?
            """, [.blob(hash), .blob(hash)]) { row in
            StoredActivityInvitation(id: row.text(0), container: row.text(1), environment: Environment(rawValue: row.text(2)) ?? .development,
                                     conversationID: row.text(3), creator: row.text(4), activity: row.text(5), createdAt: row.int64(6),
                                     expiresAt: row.int64(7), revokedAt: row.isNull(8) ? nil : row.int64(8))
        }
    }

    func addActivityInvitation(_ invitation: StoredActivityInvitation, tokenHash: [UInt8], codeHash: [UInt8]) throws -> Bool {
        try db.run("DELETE FROM activity_invitations WHERE expires_at < ?", [.integer(invitation.createdAt - 86_400_000)])
        // A taken token, code or ID writes nothing and answers false (R41).
        try db.run("""
            INSERT INTO activity_invitations (token_hash, code_hash, id, container_id, environment, conversation_id, creator, activity,
                                              created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, [.blob(tokenHash), .blob(codeHash), .text(invitation.id), .text(invitation.container), .text(invitation.environment.rawValue),
                  .text(invitation.conversationID), .text(invitation.creator), .text(invitation.activity), .integer(invitation.createdAt),
                  .integer(invitation.expiresAt)])
        return db.changes > 0
    }

    func revokeActivityInvitation(id: String, creator: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE activity_invitations SET revoked_at = ? WHERE id = ? AND creator = ? AND revoked_at IS NULL",
                   [.integer(time), .text(id), .text(creator)])
        return db.changes > 0
    }
}
