internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Conversations, their members and timelines (SQLite: `SQLiteStore+Conversations.swift`); shared
/// links, pins and contacts are still in `PostgresStore+NotYetTranslated.swift`.
extension PostgresStoreTransaction {
    func conversation(id: String) throws -> StoredConversation? {
        guard var conversation = try db.queryOne("""
            SELECT \(ConversationRows.conversationColumns) FROM conversations WHERE id = $1
            """, [.text(id)], ConversationRows.conversation) else { return nil }
        conversation.members = try db.query("""
            SELECT "user" FROM conversation_members WHERE conversation_id = $1 ORDER BY joined_at, "user"
            """, [.text(id)]) { try $0.string(0) }
        return conversation
    }

    func conversations(user: String, container: String, environment: Environment) throws -> [StoredConversation] {
        let ids = try db.query("""
            SELECT c.id FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m."user" = $1 AND c.container_id = $2 AND c.environment = $3 ORDER BY c.created_at DESC, c.id
            """, [.text(user), .text(container), .text(environment.rawValue)]) { try $0.string(0) }
        return try ids.compactMap { try conversation(id: $0) }
    }

    func isMember(conversation: String, user: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM conversation_members WHERE conversation_id = $1 AND \"user\" = $2",
                        [.text(conversation), .text(user)]) { _ in true } ?? false
    }

    func conversationEvents(conversation: String, viewer: String, after seq: Int64, limit: Int) throws -> [StoredConversationEvent] {
        try db.query("""
            SELECT \(ConversationRows.eventColumns)
            FROM conversation_events e JOIN conversation_members m ON m.conversation_id = e.conversation_id AND m."user" = $2
            WHERE e.conversation_id = $1 AND e.seq > $3 AND e.created_at >= m.joined_at ORDER BY e.seq LIMIT $4
            """, [.text(conversation), .text(viewer), .integer(seq), .integer(Int64(limit))], ConversationRows.event)
    }

    func insertConversation(_ conversation: StoredConversation) throws {
        try db.run("""
            INSERT INTO conversations (id, container_id, environment, is_group, title, created_by, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            """, [.text(conversation.id), .text(conversation.container), .text(conversation.environment.rawValue),
                  .integer(conversation.isGroup ? 1 : 0), .optional(conversation.title),
                  .text(conversation.createdBy), .integer(conversation.createdAt)])
        for member in conversation.members { try addMember(conversation: conversation.id, user: member, at: conversation.createdAt) }
    }

    func addMember(conversation: String, user: String, at time: Int64) throws {
        try db.run("""
            INSERT INTO conversation_members (conversation_id, "user", joined_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
            """, [.text(conversation), .text(user), .integer(time)])
    }

    func removeMember(conversation: String, user: String) throws {
        try db.run("DELETE FROM conversation_members WHERE conversation_id = $1 AND \"user\" = $2", [.text(conversation), .text(user)])
        try db.run("DELETE FROM shared_links WHERE conversation_id = $1 AND viewer = $2", [.text(conversation), .text(user)])
        try db.run("DELETE FROM link_pins WHERE conversation_id = $1 AND viewer = $2", [.text(conversation), .text(user)])
    }

    /// Appends to the timeline. The conversation's row is locked first (`UPDATE`), and only then
    /// is `seq` drawn from the identity: appenders to one conversation take their numbers in
    /// the order they commit, so a reader following "after the last seq I saw" misses none
    /// (decisions P4, P27).
    func appendEvent(_ event: StoredConversationEvent) throws -> Int64 {
        try db.run("UPDATE conversations SET created_at = created_at WHERE id = $1", [.text(event.conversationID)])
        guard let seq = try db.queryOne("""
            INSERT INTO conversation_events (conversation_id, event_id, kind, actor, subject, collaboration_id, body, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING seq
            """, [.text(event.conversationID), .text(event.eventID), .text(event.kind.rawValue), .text(event.actor),
                  .optional(event.subject), .optional(event.collaborationID), .bytes(event.body), .integer(event.createdAt)],
            { try $0.int64(0) }) else {
            throw StoreError(.internal, "INSERT INTO conversation_events returned no seq")
        }
        return seq
    }
}
