import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    private static let collaborationColumns = "id, container_id, environment, url, owner, kind, title, content_type, created_at, share_guid"

    private static func collaborationRow(_ row: SQLiteStatement) -> StoredCollaboration {
        StoredCollaboration(id: row.text(0), container: row.text(1), environment: Environment(rawValue: row.text(2)) ?? .development,
                            url: row.text(3), owner: row.text(4), kind: StoredCollaboration.Kind(rawValue: row.text(5)) ?? .custom,
                            title: row.isNull(6) ? nil : row.text(6), contentType: row.text(7), createdAt: row.int64(8),
                            shareGUID: row.isNull(9) ? nil : row.text(9))
    }

    func collaboration(id: String, container: String, environment: Environment) throws -> StoredCollaboration? {
        try db.queryOne("SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = ? AND environment = ? AND id = ?",
                        [.text(container), .text(environment.rawValue), .text(id)], Self.collaborationRow)
    }

    func collaboration(url: String, container: String, environment: Environment) throws -> StoredCollaboration? {
        try db.queryOne("SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = ? AND environment = ? AND url = ?",
                        [.text(container), .text(environment.rawValue), .text(url)], Self.collaborationRow)
    }

    func collaborations(urls: [String], container: String, environment: Environment) throws -> [String: StoredCollaboration] {
        var found: [String: StoredCollaboration] = [:]
        guard !urls.isEmpty else { return found }
        // One JSON value for the whole list: one statement whatever its length (issue 14).
        let sql = "SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = ? AND environment = ? AND url IN (SELECT value FROM json_each(?))"
        for collaboration in try db.query(sql, [.text(container), .text(environment.rawValue), BoundValueList.jsonText(urls)], Self.collaborationRow) {
            found[collaboration.url] = collaboration
        }
        return found
    }

    func collaborationsShared(conversation: String) throws -> [StoredCollaboration] {
        try db.query("""
            SELECT c.id, c.container_id, c.environment, c.url, c.owner, c.kind, c.title, c.content_type, c.created_at, c.share_guid
            FROM conversation_links l JOIN conversations v ON v.id = l.conversation_id
            JOIN collaborations c ON c.url = l.url AND c.container_id = v.container_id AND c.environment = v.environment
            WHERE l.conversation_id = ? ORDER BY l.last_seq
            """, [.text(conversation)], Self.collaborationRow)
    }

    func notices(viewer: String, collaboration: String, container: String, environment: Environment) throws -> [StoredConversationEvent] {
        try db.query("""
            SELECT e.seq, e.conversation_id, e.event_id, e.kind, e.actor, e.subject, e.collaboration_id, e.body, e.created_at
            FROM conversation_events e
            JOIN conversation_members m ON m.conversation_id = e.conversation_id AND m.user = ?1
            JOIN conversations c ON c.id = e.conversation_id AND c.container_id = ?3 AND c.environment = ?4
            WHERE e.collaboration_id = ?2 AND e.kind = 'notice' AND (e.subject IS NULL OR e.subject = ?1) AND e.created_at >= m.joined_at
              AND e.seq > COALESCE((SELECT through_seq FROM notice_clears
                                    WHERE viewer = ?1 AND container_id = ?3 AND environment = ?4 AND collaboration_id = ?2), 0)
            ORDER BY e.seq
            """, [.text(viewer), .text(collaboration), .text(container), .text(environment.rawValue)], ConversationRows.event)
    }

    private static let promptColumns = "id, container_id, environment, owner, conversation_id, person, change, collaborations, state, created_at"

    private static func promptRow(_ row: SQLiteStatement) -> StoredMembershipPrompt {
        StoredMembershipPrompt(id: row.text(0), container: row.text(1), environment: Environment(rawValue: row.text(2)) ?? .development,
                               owner: row.text(3), conversationID: row.text(4), person: row.text(5),
                               change: StoredMembershipPrompt.Change(rawValue: row.text(6)) ?? .add,
                               collaborations: StoredLines.split(row.text(7)),
                               state: StoredMembershipPrompt.State(rawValue: row.text(8)) ?? .pending, createdAt: row.int64(9))
    }

    func prompts(owner: String, container: String, environment: Environment, state: StoredMembershipPrompt.State?) throws -> [StoredMembershipPrompt] {
        var sql = "SELECT \(Self.promptColumns) FROM membership_prompts WHERE owner = ? AND container_id = ? AND environment = ?"
        var arguments: [SQLiteValue] = [.text(owner), .text(container), .text(environment.rawValue)]
        if let state {
            sql += " AND state = ?"
            arguments.append(.text(state.rawValue))
        }
        return try db.query(sql + " ORDER BY created_at, id", arguments, Self.promptRow)
    }

    func prompt(id: String) throws -> StoredMembershipPrompt? {
        try db.queryOne("SELECT \(Self.promptColumns) FROM membership_prompts WHERE id = ?", [.text(id)], Self.promptRow)
    }

    func putCollaboration(_ collaboration: StoredCollaboration) throws {
        try db.run("INSERT OR IGNORE INTO collaborations (\(Self.collaborationColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   [.text(collaboration.id), .text(collaboration.container), .text(collaboration.environment.rawValue), .text(collaboration.url),
                    .text(collaboration.owner), .text(collaboration.kind.rawValue), collaboration.title.map(SQLiteValue.text) ?? .null,
                    .text(collaboration.contentType), .integer(collaboration.createdAt), collaboration.shareGUID.map(SQLiteValue.text) ?? .null])
    }

    func setCollaborationMetadata(id: String, container: String, environment: Environment, title: String?, contentType: String) throws {
        try db.run("UPDATE collaborations SET title = ?, content_type = ? WHERE container_id = ? AND environment = ? AND id = ?",
                   [title.map(SQLiteValue.text) ?? .null, .text(contentType), .text(container), .text(environment.rawValue), .text(id)])
    }

    func clearNotices(viewer: String, collaboration: String, container: String, environment: Environment, through seq: Int64) throws {
        try db.run("""
            INSERT INTO notice_clears (viewer, container_id, environment, collaboration_id, through_seq) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (viewer, container_id, environment, collaboration_id) DO UPDATE SET through_seq = MAX(through_seq, excluded.through_seq)
            """, [.text(viewer), .text(container), .text(environment.rawValue), .text(collaboration), .integer(seq)])
    }

    func putPrompt(_ prompt: StoredMembershipPrompt) throws {
        try db.run("""
            INSERT INTO membership_prompts (\(Self.promptColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (id) DO UPDATE SET state = excluded.state
            """, [.text(prompt.id), .text(prompt.container), .text(prompt.environment.rawValue), .text(prompt.owner), .text(prompt.conversationID),
                  .text(prompt.person), .text(prompt.change.rawValue), .text(StoredLines.join(prompt.collaborations)),
                  .text(prompt.state.rawValue), .integer(prompt.createdAt)])
    }
}
