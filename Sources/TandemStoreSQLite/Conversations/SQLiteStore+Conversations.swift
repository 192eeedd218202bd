import Foundation
import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func conversation(id: String) throws -> StoredConversation? {
        guard var conversation = try db.queryOne("""
            SELECT \(ConversationRows.conversationColumns) FROM conversations WHERE id = ?
            """, [.text(id)], ConversationRows.conversation) else { return nil }
        conversation.members = try db.query("SELECT user FROM conversation_members WHERE conversation_id = ? ORDER BY joined_at, user",
                                            [.text(id)]) { $0.text(0) }
        return conversation
    }

    func conversations(user: String, container: String, environment: Environment) throws -> [StoredConversation] {
        let ids = try db.query("""
            SELECT c.id FROM conversation_members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.user = ? AND c.container_id = ? AND c.environment = ? ORDER BY c.created_at DESC, c.id
            """, [.text(user), .text(container), .text(environment.rawValue)]) { $0.text(0) }
        return try ids.compactMap { try conversation(id: $0) }
    }

    func isMember(conversation: String, user: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM conversation_members WHERE conversation_id = ? AND user = ?", [.text(conversation), .text(user)]) { _ in true } ?? false
    }

    func conversationEvents(conversation: String, viewer: String, after seq: Int64, limit: Int) throws -> [StoredConversationEvent] {
        try db.query("""
            SELECT \(ConversationRows.eventColumns)
            FROM conversation_events e JOIN conversation_members m ON m.conversation_id = e.conversation_id AND m.user = ?2
            WHERE e.conversation_id = ?1 AND e.seq > ?3 AND e.created_at >= m.joined_at ORDER BY e.seq LIMIT ?4
            """, [.text(conversation), .text(viewer), .integer(seq), .integer(Int64(limit))], ConversationRows.event)
    }

    func sharedLinks(viewer: String, container: String, environment: Environment, hosts: [String]?, suffixes: [String]?) throws -> [StoredSharedLink] {
        // Only the columns that differ per row: this read feeds every highlight list.
        var sql = "SELECT url, conversation_id, host, sender, event_id, sent_at, title FROM shared_links WHERE viewer = ? AND container_id = ? AND environment = ?"
        var arguments: [SQLiteValue] = [.text(viewer), .text(container), .text(environment.rawValue)]
        if hosts != nil || suffixes != nil {
            var terms: [String] = []
            let hosts = hosts ?? [], suffixes = suffixes ?? []
            if !hosts.isEmpty {
                terms.append("host IN (SELECT value FROM json_each(?))")
                arguments.append(BoundValueList.jsonText(hosts))
            }
            for suffix in suffixes {
                // GLOB is case-sensitive (hosts are stored lowercased) and escapes its own metacharacters.
                terms.append("host GLOB ?")
                arguments.append(.text("*" + suffix.replacingOccurrences(of: "[", with: "[[]").replacingOccurrences(of: "*", with: "[*]")
                    .replacingOccurrences(of: "?", with: "[?]")))
            }
            guard !terms.isEmpty else { return [] }
            sql += " AND (" + terms.joined(separator: " OR ") + ")"
        }
        return try db.query(sql, arguments) { row in
            StoredSharedLink(viewer: viewer, container: container, environment: environment, url: row.text(0), conversationID: row.text(1),
                             host: row.text(2), sender: row.text(3), eventID: row.text(4), sentAt: row.int64(5),
                             title: row.isNull(6) ? nil : row.text(6))
        }
    }

    func sharedShareLinks(viewer: String, container: String, environment: Environment) throws -> [StoredSharedLink] {
        // CROSS JOIN keeps the share collaborations as the outer loop (few), each probing the
        // viewer's rows by primary key; left to itself SQLite walked every row of the viewer.
        try db.query("""
            SELECT s.viewer, s.container_id, s.environment, s.url, s.conversation_id, s.host, s.sender, s.event_id, s.sent_at, s.title
            FROM collaborations c CROSS JOIN shared_links s
              ON s.viewer = ? AND s.container_id = c.container_id AND s.environment = c.environment AND s.url = c.url
            WHERE c.container_id = ? AND c.environment = ? AND c.kind = 'share'
            """, [.text(viewer), .text(container), .text(environment.rawValue)], ConversationRows.link)
    }

    func sharedLinks(viewer: String, container: String, environment: Environment, url: String) throws -> [StoredSharedLink] {
        try db.query("SELECT \(ConversationRows.linkColumns) FROM shared_links WHERE viewer = ? AND container_id = ? AND environment = ? AND url = ?",
                     [.text(viewer), .text(container), .text(environment.rawValue), .text(url)], ConversationRows.link)
    }

    func coMembers(viewer: String, container: String, environment: Environment) throws -> [(conversation: String, isGroup: Bool, member: String)] {
        try db.query("""
            SELECT c.id, c.is_group, o.user FROM conversation_members m
            JOIN conversations c ON c.id = m.conversation_id
            JOIN conversation_members o ON o.conversation_id = m.conversation_id
            WHERE m.user = ? AND c.container_id = ? AND c.environment = ?
            """, [.text(viewer), .text(container), .text(environment.rawValue)]) { ($0.text(0), $0.int64(1) != 0, $0.text(2)) }
    }

    func conversationsSharing(url: String) throws -> [String] {
        try db.query("SELECT conversation_id FROM conversation_links WHERE url = ? ORDER BY conversation_id", [.text(url)]) { $0.text(0) }
    }

    func links(conversation: String) throws -> [String] {
        try db.query("SELECT url FROM conversation_links WHERE conversation_id = ? ORDER BY last_seq", [.text(conversation)]) { $0.text(0) }
    }

    func linkSenders(conversation: String, url: String) throws -> [String] {
        try db.query("SELECT sender FROM conversation_link_senders WHERE conversation_id = ? AND url = ? ORDER BY sender",
                     [.text(conversation), .text(url)]) { $0.text(0) }
    }

    func contacts(owner: String) throws -> [StoredContact] {
        try db.query("SELECT handle, user_record_name FROM contacts WHERE owner = ? ORDER BY handle", [.text(owner)]) {
            StoredContact(handle: $0.text(0), userRecordName: $0.isNull(1) ? nil : $0.text(1))
        }
    }

    func pins(viewer: String) throws -> [(conversation: String, url: String)] {
        try db.query("SELECT conversation_id, url FROM link_pins WHERE viewer = ?", [.text(viewer)]) { ($0.text(0), $0.text(1)) }
    }

    // MARK: Writing

    func insertConversation(_ conversation: StoredConversation) throws {
        try db.run("""
            INSERT INTO conversations (id, container_id, environment, is_group, title, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.text(conversation.id), .text(conversation.container), .text(conversation.environment.rawValue),
                  .integer(conversation.isGroup ? 1 : 0), conversation.title.map(SQLiteValue.text) ?? .null,
                  .text(conversation.createdBy), .integer(conversation.createdAt)])
        for member in conversation.members { try addMember(conversation: conversation.id, user: member, at: conversation.createdAt) }
    }

    func addMember(conversation: String, user: String, at time: Int64) throws {
        try db.run("INSERT OR IGNORE INTO conversation_members (conversation_id, user, joined_at) VALUES (?, ?, ?)",
                   [.text(conversation), .text(user), .integer(time)])
    }

    func removeMember(conversation: String, user: String) throws {
        try db.run("DELETE FROM conversation_members WHERE conversation_id = ? AND user = ?", [.text(conversation), .text(user)])
        try db.run("DELETE FROM shared_links WHERE conversation_id = ? AND viewer = ?", [.text(conversation), .text(user)])
        try db.run("DELETE FROM link_pins WHERE conversation_id = ? AND viewer = ?", [.text(conversation), .text(user)])
    }

    func appendEvent(_ event: StoredConversationEvent) throws -> Int64 {
        try db.run("""
            INSERT INTO conversation_events (conversation_id, event_id, kind, actor, subject, collaboration_id, body, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(event.conversationID), .text(event.eventID), .text(event.kind.rawValue), .text(event.actor),
                  event.subject.map(SQLiteValue.text) ?? .null, event.collaborationID.map(SQLiteValue.text) ?? .null,
                  .blob(event.body), .integer(event.createdAt)])
        return db.lastInsertRowID
    }

    func putSharedLink(_ link: StoredSharedLink) throws {
        try db.run("""
            INSERT INTO shared_links (\(ConversationRows.linkColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (viewer, container_id, environment, url, conversation_id) DO UPDATE SET
                sender = excluded.sender, event_id = excluded.event_id, sent_at = excluded.sent_at, title = excluded.title
            WHERE excluded.sent_at >= shared_links.sent_at
            """, [.text(link.viewer), .text(link.container), .text(link.environment.rawValue), .text(link.url), .text(link.conversationID),
                  .text(link.host), .text(link.sender), .text(link.eventID), .integer(link.sentAt), link.title.map(SQLiteValue.text) ?? .null])
    }

    func putConversationLink(conversation: String, url: String, seq: Int64, sender: String) throws {
        try db.run("""
            INSERT INTO conversation_links (conversation_id, url, last_seq) VALUES (?, ?, ?)
            ON CONFLICT (conversation_id, url) DO UPDATE SET last_seq = excluded.last_seq
            """, [.text(conversation), .text(url), .integer(seq)])
        try db.run("INSERT OR IGNORE INTO conversation_link_senders (conversation_id, url, sender) VALUES (?, ?, ?)",
                   [.text(conversation), .text(url), .text(sender)])
    }

    func setPin(viewer: String, conversation: String, url: String, pinned: Bool, at time: Int64) throws {
        if pinned {
            try db.run("INSERT OR IGNORE INTO link_pins (viewer, conversation_id, url, pinned_at) VALUES (?, ?, ?, ?)",
                       [.text(viewer), .text(conversation), .text(url), .integer(time)])
        } else {
            try db.run("DELETE FROM link_pins WHERE viewer = ? AND conversation_id = ? AND url = ?", [.text(viewer), .text(conversation), .text(url)])
        }
    }

    func putContact(owner: String, _ contact: StoredContact) throws {
        try db.run("""
            INSERT INTO contacts (owner, handle, user_record_name) VALUES (?, ?, ?)
            ON CONFLICT (owner, handle) DO UPDATE SET user_record_name = excluded.user_record_name
            """, [.text(owner), .text(contact.handle), contact.userRecordName.map(SQLiteValue.text) ?? .null])
    }

    func removeContact(owner: String, handle: String) throws -> Bool {
        try db.run("DELETE FROM contacts WHERE owner = ? AND handle = ?", [.text(owner), .text(handle)])
        return db.changes > 0
    }
}
