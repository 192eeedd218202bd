internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Collaborations, notices and membership prompts (SQLite: `SQLiteStore+Collaboration.swift`).
/// Notices are timeline events, read in `seq` order (decisions P4, P27).
extension PostgresStoreTransaction {
    private static let collaborationColumns = "id, container_id, environment, url, owner, kind, title, content_type, created_at, share_guid"

    /// `collaborationColumns` of the table aliased `alias`.
    private static func collaborationColumns(of alias: String) -> String {
        collaborationColumns.split(separator: ", ").map { alias + "." + $0 }.joined(separator: ", ")
    }

    private static func collaborationRow(_ row: PostgresRow) throws -> StoredCollaboration {
        StoredCollaboration(id: try row.string(0), container: try row.string(1),
                            environment: Environment(rawValue: try row.string(2)) ?? .development, url: try row.string(3),
                            owner: try row.string(4), kind: StoredCollaboration.Kind(rawValue: try row.string(5)) ?? .custom,
                            title: try row.optionalString(6), contentType: try row.string(7), createdAt: try row.int64(8),
                            shareGUID: try row.optionalString(9))
    }

    func collaboration(id: String, container: String, environment: Environment) throws -> StoredCollaboration? {
        try db.queryOne("SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = $1 AND environment = $2 AND id = $3",
                        [.text(container), .text(environment.rawValue), .text(id)], Self.collaborationRow)
    }

    func collaboration(url: String, container: String, environment: Environment) throws -> StoredCollaboration? {
        try db.queryOne("SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = $1 AND environment = $2 AND url = $3",
                        [.text(container), .text(environment.rawValue), .text(url)], Self.collaborationRow)
    }

    func collaborations(urls: [String], container: String, environment: Environment) throws -> [String: StoredCollaboration] {
        var found: [String: StoredCollaboration] = [:]
        guard !urls.isEmpty else { return found }
        // One text[] for the whole list: one statement whatever its length (issue 14, P29).
        let sql = "SELECT \(Self.collaborationColumns) FROM collaborations WHERE container_id = $1 AND environment = $2 AND url = ANY($3::text[])"
        for collaboration in try db.query(sql, [.text(container), .text(environment.rawValue), .textArray(urls)], Self.collaborationRow) {
            found[collaboration.url] = collaboration
        }
        return found
    }

    func collaborationsShared(conversation: String) throws -> [StoredCollaboration] {
        try db.query("""
            SELECT \(Self.collaborationColumns(of: "c"))
            FROM conversation_links l JOIN conversations v ON v.id = l.conversation_id
            JOIN collaborations c ON c.url = l.url AND c.container_id = v.container_id AND c.environment = v.environment
            WHERE l.conversation_id = $1 ORDER BY l.last_seq
            """, [.text(conversation)], Self.collaborationRow)
    }

    func notices(viewer: String, collaboration: String, container: String, environment: Environment) throws -> [StoredConversationEvent] {
        try db.query("""
            SELECT e.seq, e.conversation_id, e.event_id, e.kind, e.actor, e.subject, e.collaboration_id, e.body, e.created_at
            FROM conversation_events e
            JOIN conversation_members m ON m.conversation_id = e.conversation_id AND m."user" = $1
            JOIN conversations c ON c.id = e.conversation_id AND c.container_id = $3 AND c.environment = $4
            WHERE e.collaboration_id = $2 AND e.kind = 'notice' AND (e.subject IS NULL OR e.subject = $1) AND e.created_at >= m.joined_at
              AND e.seq > COALESCE((SELECT through_seq FROM notice_clears
                                    WHERE viewer = $1 AND container_id = $3 AND environment = $4 AND collaboration_id = $2), 0)
            ORDER BY e.seq
            """, [.text(viewer), .text(collaboration), .text(container), .text(environment.rawValue)], ConversationRows.event)
    }

    private static let promptColumns = "id, container_id, environment, owner, conversation_id, person, change, collaborations, state, created_at"

    private static func promptRow(_ row: PostgresRow) throws -> StoredMembershipPrompt {
        StoredMembershipPrompt(id: try row.string(0), container: try row.string(1),
                               environment: Environment(rawValue: try row.string(2)) ?? .development,
                               owner: try row.string(3), conversationID: try row.string(4), person: try row.string(5),
                               change: StoredMembershipPrompt.Change(rawValue: try row.string(6)) ?? .add,
                               collaborations: StoredLines.split(try row.string(7)),
                               state: StoredMembershipPrompt.State(rawValue: try row.string(8)) ?? .pending, createdAt: try row.int64(9))
    }

    func prompts(owner: String, container: String, environment: Environment, state: StoredMembershipPrompt.State?) throws -> [StoredMembershipPrompt] {
        // A NULL state means every state: one statement either way.
        try db.query("""
            SELECT \(Self.promptColumns) FROM membership_prompts
            WHERE owner = $1 AND container_id = $2 AND environment = $3 AND ($4::text IS NULL OR state = $4::text)
            ORDER BY created_at, id
            """, [.text(owner), .text(container), .text(environment.rawValue), .optional(state?.rawValue)], Self.promptRow)
    }

    func prompt(id: String) throws -> StoredMembershipPrompt? {
        try db.queryOne("SELECT \(Self.promptColumns) FROM membership_prompts WHERE id = $1", [.text(id)], Self.promptRow)
    }

    func putCollaboration(_ collaboration: StoredCollaboration) throws {
        // An existing collaboration with the same id or the same URL stays as it is (SQLite's INSERT OR IGNORE).
        try db.run("""
            INSERT INTO collaborations (\(Self.collaborationColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING
            """, [.text(collaboration.id), .text(collaboration.container), .text(collaboration.environment.rawValue), .text(collaboration.url),
                  .text(collaboration.owner), .text(collaboration.kind.rawValue), .optional(collaboration.title),
                  .text(collaboration.contentType), .integer(collaboration.createdAt), .optional(collaboration.shareGUID)])
    }

    func setCollaborationMetadata(id: String, container: String, environment: Environment, title: String?, contentType: String) throws {
        try db.run("UPDATE collaborations SET title = $1, content_type = $2 WHERE container_id = $3 AND environment = $4 AND id = $5",
                   [.optional(title), .text(contentType), .text(container), .text(environment.rawValue), .text(id)])
    }

    func clearNotices(viewer: String, collaboration: String, container: String, environment: Environment, through seq: Int64) throws {
        // The mark only moves forward.
        try db.run("""
            INSERT INTO notice_clears (viewer, container_id, environment, collaboration_id, through_seq) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (viewer, container_id, environment, collaboration_id)
            DO UPDATE SET through_seq = GREATEST(notice_clears.through_seq, EXCLUDED.through_seq)
            """, [.text(viewer), .text(container), .text(environment.rawValue), .text(collaboration), .integer(seq)])
    }

    func putPrompt(_ prompt: StoredMembershipPrompt) throws {
        // A prompt's only change after it is made is its state.
        try db.run("""
            INSERT INTO membership_prompts (\(Self.promptColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state
            """, [.text(prompt.id), .text(prompt.container), .text(prompt.environment.rawValue), .text(prompt.owner), .text(prompt.conversationID),
                  .text(prompt.person), .text(prompt.change.rawValue), .text(StoredLines.join(prompt.collaborations)),
                  .text(prompt.state.rawValue), .integer(prompt.createdAt)])
    }
}
