internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Links shared in conversations, pins and contacts (SQLite: `SQLiteStore+Conversations.swift`).
extension PostgresStoreTransaction {
    /// Hosts and suffixes are one `text[]` parameter each; a host matches a suffix when it ends
    /// with it (case-sensitive: hosts are stored lowercased), as SQLite's `GLOB '*suffix'`.
    func sharedLinks(viewer: String, container: String, environment: Environment, hosts: [String]?, suffixes: [String]?) throws -> [StoredSharedLink] {
        // Only the columns that differ per row: this read feeds every highlight list.
        var sql = """
            SELECT url, conversation_id, host, sender, event_id, sent_at, title FROM shared_links
            WHERE viewer = $1 AND container_id = $2 AND environment = $3
            """
        var arguments: [PostgresValue] = [.text(viewer), .text(container), .text(environment.rawValue)]
        if hosts != nil || suffixes != nil {
            let hosts = hosts ?? [], suffixes = suffixes ?? []
            guard !hosts.isEmpty || !suffixes.isEmpty else { return [] }
            arguments += [.textArray(hosts), .textArray(suffixes)]
            sql += " AND (host = ANY($4::text[]) OR EXISTS (SELECT 1 FROM unnest($5::text[]) x WHERE right(host, char_length(x)) = x))"
        }
        return try db.query(sql, arguments) { row in
            StoredSharedLink(viewer: viewer, container: container, environment: environment, url: try row.string(0),
                             conversationID: try row.string(1), host: try row.string(2), sender: try row.string(3),
                             eventID: try row.string(4), sentAt: try row.int64(5), title: try row.optionalString(6))
        }
    }

    func sharedShareLinks(viewer: String, container: String, environment: Environment) throws -> [StoredSharedLink] {
        try db.query("""
            SELECT s.viewer, s.container_id, s.environment, s.url, s.conversation_id, s.host, s.sender, s.event_id, s.sent_at, s.title
            FROM collaborations c JOIN shared_links s
              ON s.viewer = $1 AND s.container_id = c.container_id AND s.environment = c.environment AND s.url = c.url
            WHERE c.container_id = $2 AND c.environment = $3 AND c.kind = 'share'
            """, [.text(viewer), .text(container), .text(environment.rawValue)], ConversationRows.link)
    }

    func sharedLinks(viewer: String, container: String, environment: Environment, url: String) throws -> [StoredSharedLink] {
        try db.query("SELECT \(ConversationRows.linkColumns) FROM shared_links WHERE viewer = $1 AND container_id = $2 AND environment = $3 AND url = $4",
                     [.text(viewer), .text(container), .text(environment.rawValue), .text(url)], ConversationRows.link)
    }

    func coMembers(viewer: String, container: String, environment: Environment) throws -> [(conversation: String, isGroup: Bool, member: String)] {
        try db.query("""
            SELECT c.id, c.is_group, o."user" FROM conversation_members m
            JOIN conversations c ON c.id = m.conversation_id
            JOIN conversation_members o ON o.conversation_id = m.conversation_id
            WHERE m."user" = $1 AND c.container_id = $2 AND c.environment = $3
            """, [.text(viewer), .text(container), .text(environment.rawValue)]) { (try $0.string(0), try $0.int64(1) != 0, try $0.string(2)) }
    }

    func conversationsSharing(url: String) throws -> [String] {
        try db.query("SELECT conversation_id FROM conversation_links WHERE url = $1 ORDER BY conversation_id", [.text(url)]) { try $0.string(0) }
    }

    func links(conversation: String) throws -> [String] {
        try db.query("SELECT url FROM conversation_links WHERE conversation_id = $1 ORDER BY last_seq", [.text(conversation)]) { try $0.string(0) }
    }

    func linkSenders(conversation: String, url: String) throws -> [String] {
        try db.query("SELECT sender FROM conversation_link_senders WHERE conversation_id = $1 AND url = $2 ORDER BY sender",
                     [.text(conversation), .text(url)]) { try $0.string(0) }
    }

    func contacts(owner: String) throws -> [StoredContact] {
        try db.query("SELECT handle, user_record_name FROM contacts WHERE owner = $1 ORDER BY tandem_fold(handle), handle", [.text(owner)]) {
            StoredContact(handle: try $0.string(0), userRecordName: try $0.optionalString(1))
        }
    }

    func pins(viewer: String) throws -> [(conversation: String, url: String)] {
        try db.query("SELECT conversation_id, url FROM link_pins WHERE viewer = $1", [.text(viewer)]) { (try $0.string(0), try $0.string(1)) }
    }

    // MARK: Writing

    func putSharedLink(_ link: StoredSharedLink) throws {
        try db.run("""
            INSERT INTO shared_links (\(ConversationRows.linkColumns)) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (viewer, container_id, environment, url, conversation_id) DO UPDATE SET
                sender = excluded.sender, event_id = excluded.event_id, sent_at = excluded.sent_at, title = excluded.title
            WHERE excluded.sent_at >= shared_links.sent_at
            """, [.text(link.viewer), .text(link.container), .text(link.environment.rawValue), .text(link.url), .text(link.conversationID),
                  .text(link.host), .text(link.sender), .text(link.eventID), .integer(link.sentAt), .optional(link.title)])
    }

    func putConversationLink(conversation: String, url: String, seq: Int64, sender: String) throws {
        try db.run("""
            INSERT INTO conversation_links (conversation_id, url, last_seq) VALUES ($1, $2, $3)
            ON CONFLICT (conversation_id, url) DO UPDATE SET last_seq = excluded.last_seq
            """, [.text(conversation), .text(url), .integer(seq)])
        try db.run("INSERT INTO conversation_link_senders (conversation_id, url, sender) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                   [.text(conversation), .text(url), .text(sender)])
    }

    func setPin(viewer: String, conversation: String, url: String, pinned: Bool, at time: Int64) throws {
        if pinned {
            try db.run("INSERT INTO link_pins (viewer, conversation_id, url, pinned_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                       [.text(viewer), .text(conversation), .text(url), .integer(time)])
        } else {
            try db.run("DELETE FROM link_pins WHERE viewer = $1 AND conversation_id = $2 AND url = $3",
                       [.text(viewer), .text(conversation), .text(url)])
        }
    }

    func putContact(owner: String, _ contact: StoredContact) throws {
        try db.run("""
            INSERT INTO contacts (owner, handle, user_record_name) VALUES ($1, $2, $3)
            ON CONFLICT (owner, tandem_fold(handle)) DO UPDATE SET user_record_name = excluded.user_record_name
            """, [.text(owner), .text(contact.handle), .optional(contact.userRecordName)])
    }

    func removeContact(owner: String, handle: String) throws -> Bool {
        try db.run("DELETE FROM contacts WHERE owner = $1 AND tandem_fold(handle) = tandem_fold($2)", [.text(owner), .text(handle)]) > 0
    }
}
