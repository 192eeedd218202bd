import Foundation
public import TandemCore

/// Conversations as group sessions need them: an identifier and its members (decisions G1).
/// Kept apart from the `Store` protocol: it is the stand-in until issue 8's conversations.
extension SQLiteStore {
    /// Creates a conversation of `creator` and `members` (the creator included) and returns its ID.
    public func createSessionConversation(container: String, environment: Environment, creator: String,
                                          members: Set<String>) throws -> String {
        let id = UUID().uuidString.lowercased()
        let everyone = members.union([creator])
        try database.write { db in
            try db.run("INSERT INTO session_conversations (id, container_id, environment, creator, created_at) VALUES (?, ?, ?, ?, ?)",
                       [.text(id), .text(container), .text(environment.rawValue), .text(creator), .integer(Clock.milliseconds())])
            for member in everyone {
                try db.run("INSERT INTO session_conversation_members (conversation_id, user_record_name) VALUES (?, ?)",
                           [.text(id), .text(member)])
            }
        }
        return id
    }

    /// The members of a conversation of this container environment, or nil when there is none.
    public func sessionConversationMembers(_ id: String, container: String, environment: Environment) throws -> Set<String>? {
        try database.read { db -> Set<String>? in
            guard try db.queryOne("SELECT 1 FROM session_conversations WHERE id = ? AND container_id = ? AND environment = ?",
                                  [.text(id), .text(container), .text(environment.rawValue)], { _ in true }) == true else { return nil }
            return Set(try db.query("SELECT user_record_name FROM session_conversation_members WHERE conversation_id = ?",
                                    [.text(id)]) { $0.text(0) })
        }
    }

    /// Conversations of this container environment whose members are exactly `members`.
    public func sessionConversations(withMembers members: Set<String>, container: String, environment: Environment) throws -> [String] {
        guard let first = members.first else { return [] }
        let candidates = try database.read { db in
            try db.query("""
                SELECT c.id FROM session_conversations c JOIN session_conversation_members m ON m.conversation_id = c.id
                WHERE m.user_record_name = ? AND c.container_id = ? AND c.environment = ? ORDER BY c.created_at
                """, [.text(first), .text(container), .text(environment.rawValue)]) { $0.text(0) }
        }
        return try candidates.filter { try sessionConversationMembers($0, container: container, environment: environment) == members }
    }

    /// Adds (`adding` true) or removes a member; returns whether anything changed.
    public func changeSessionConversationMember(_ id: String, user: String, adding: Bool) throws -> Bool {
        try database.write { db -> Bool in
            if adding {
                try db.run("INSERT OR IGNORE INTO session_conversation_members (conversation_id, user_record_name) VALUES (?, ?)",
                           [.text(id), .text(user)])
            } else {
                try db.run("DELETE FROM session_conversation_members WHERE conversation_id = ? AND user_record_name = ?",
                           [.text(id), .text(user)])
            }
            return db.changes == 1
        }
    }
}
