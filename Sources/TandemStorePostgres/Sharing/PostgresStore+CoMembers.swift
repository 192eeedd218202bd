internal import TandemPostgres
internal import TandemStore

/// Who sees whose name and picture (decisions R32; SQLite: `SQLiteStore+CoMembers.swift`).
extension PostgresStoreTransaction {
    func sharesConversationOrShare(_ person: String, with other: String) throws -> Bool {
        guard person != other else { return false }
        return try db.queryOne("""
            SELECT EXISTS (
                SELECT 1 FROM conversation_members a JOIN conversation_members b ON b.conversation_id = a.conversation_id
                WHERE a."user" = $1 AND b."user" = $2
            ) OR EXISTS (
                SELECT 1 FROM share_participants a JOIN share_participants b ON b.share_id = a.share_id
                WHERE a.user_record_name = $1 AND a.status = 'ACCEPTED' AND b.user_record_name = $2 AND b.status = 'ACCEPTED'
            ) OR EXISTS (
                SELECT 1 FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
                WHERE p.user_record_name = $1 AND p.status = 'ACCEPTED' AND z.owner = $2
            ) OR EXISTS (
                SELECT 1 FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
                WHERE p.user_record_name = $2 AND p.status = 'ACCEPTED' AND z.owner = $1
            )
            """, [.text(person), .text(other)]) { try $0.bool(0) } ?? false
    }

    func setNames(user: String, givenName: String?, familyName: String?) throws {
        let display = [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        try db.run("UPDATE users SET given_name = $1, family_name = $2, display_name = $3 WHERE record_name = $4 AND deleted_at IS NULL",
                   [.optional(givenName), .optional(familyName),
                    display.isEmpty ? .null : .text(display), .text(user)])
    }
}
