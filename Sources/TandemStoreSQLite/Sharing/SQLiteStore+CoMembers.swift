import TandemSQLite
import TandemStore

/// Who sees whose name and picture (decisions R32; PostgreSQL: `PostgresStore+CoMembers.swift`).
extension SQLiteStoreTransaction {
    func sharesConversationOrShare(_ person: String, with other: String) throws -> Bool {
        guard person != other else { return false }
        // Each branch starts from an index by person (conversation_members_by_user,
        // share_participants_by_user), so the cost follows the person's own memberships.
        return try db.queryOne("""
            SELECT 1 WHERE EXISTS (
                SELECT 1 FROM conversation_members a JOIN conversation_members b ON b.conversation_id = a.conversation_id
                WHERE a.user = ?1 AND b.user = ?2
            ) OR EXISTS (
                SELECT 1 FROM share_participants a JOIN share_participants b ON b.share_id = a.share_id
                WHERE a.user_record_name = ?1 AND a.status = 'ACCEPTED' AND b.user_record_name = ?2 AND b.status = 'ACCEPTED'
            ) OR EXISTS (
                SELECT 1 FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
                WHERE p.user_record_name = ?1 AND p.status = 'ACCEPTED' AND z.owner = ?2
            ) OR EXISTS (
                SELECT 1 FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
                WHERE p.user_record_name = ?2 AND p.status = 'ACCEPTED' AND z.owner = ?1
            )
            """, [.text(person), .text(other)]) { _ in true } ?? false
    }

    func setNames(user: String, givenName: String?, familyName: String?) throws {
        let display = [givenName, familyName].compactMap { $0 }.joined(separator: " ")
        try db.run("UPDATE users SET given_name = ?, family_name = ?, display_name = ? WHERE record_name = ? AND deleted_at IS NULL",
                   [givenName.map(SQLiteValue.text) ?? .null, familyName.map(SQLiteValue.text) ?? .null,
                    display.isEmpty ? .null : .text(display), .text(user)])
    }
}
