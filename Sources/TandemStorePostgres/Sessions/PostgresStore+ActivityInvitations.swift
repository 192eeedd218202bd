internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Activity invitations (decisions R19–R21; SQLite: `SQLiteStore+ActivityInvitations.swift`).
extension PostgresStoreTransaction {
    func activityInvitation(hash: [UInt8]) throws -> StoredActivityInvitation? {
        try db.queryOne("""
            SELECT id, container_id, environment, conversation_id, creator, activity, created_at, expires_at, revoked_at
            FROM activity_invitations WHERE token_hash = $1 OR code_hash = $1
            """, [.bytes(hash)]) { row in
            StoredActivityInvitation(id: try row.string(0), container: try row.string(1),
                                     environment: Environment(rawValue: try row.string(2)) ?? .development, conversationID: try row.string(3),
                                     creator: try row.string(4), activity: try row.string(5), createdAt: try row.int64(6),
                                     expiresAt: try row.int64(7), revokedAt: try row.optionalInt64(8))
        }
    }

    func addActivityInvitation(_ invitation: StoredActivityInvitation, tokenHash: [UInt8], codeHash: [UInt8]) throws -> Bool {
        try db.run("DELETE FROM activity_invitations WHERE expires_at < $1", [.integer(invitation.createdAt - 86_400_000)])
        // A taken token, code or ID writes nothing and answers false (R41); DO NOTHING keeps the
        // transaction usable for the next try.
        return try db.run("""
            INSERT INTO activity_invitations (token_hash, code_hash, id, container_id, environment, conversation_id, creator, activity,
                                              created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT DO NOTHING
            """, [.bytes(tokenHash), .bytes(codeHash), .text(invitation.id), .text(invitation.container), .text(invitation.environment.rawValue),
                  .text(invitation.conversationID), .text(invitation.creator), .text(invitation.activity), .integer(invitation.createdAt),
                  .integer(invitation.expiresAt)]) > 0
    }

    func revokeActivityInvitation(id: String, creator: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE activity_invitations SET revoked_at = $1 WHERE id = $2 AND creator = $3 AND revoked_at IS NULL",
                   [.integer(time), .text(id), .text(creator)]) > 0
    }
}
