import TandemCore

/// Conversations, their timeline events and shared links as both stores select them (decisions P44).
package enum ConversationRows {
    /// A conversation's columns without its members (`conversations`); `conversation(_:)` reads them.
    package static let conversationColumns = "id, container_id, environment, is_group, title, created_by, created_at"

    /// A conversation with no members: the stores read those with a second query.
    package static func conversation(_ row: some StoredRow) throws -> StoredConversation {
        StoredConversation(id: try row.string(0), container: try row.string(1),
                           environment: Environment(rawValue: try row.string(2)) ?? .development,
                           isGroup: try row.flag(3), title: try row.optionalString(4), createdBy: try row.string(5),
                           createdAt: try row.int64(6), members: [])
    }

    /// A timeline event's columns, `conversation_events e`; `event(_:)` reads them.
    package static let eventColumns = "e.seq, e.conversation_id, e.event_id, e.kind, e.actor, e.subject, e.collaboration_id, e.body, e.created_at"

    package static func event(_ row: some StoredRow) throws -> StoredConversationEvent {
        StoredConversationEvent(seq: try row.int64(0), conversationID: try row.string(1), eventID: try row.string(2),
                                kind: StoredConversationEvent.Kind(rawValue: try row.string(3)) ?? .message, actor: try row.string(4),
                                subject: try row.optionalString(5), collaborationID: try row.optionalString(6),
                                body: try row.bytes(7), createdAt: try row.int64(8))
    }

    /// A shared link's columns (`shared_links`); `link(_:)` reads them.
    package static let linkColumns = "viewer, container_id, environment, url, conversation_id, host, sender, event_id, sent_at, title"

    package static func link(_ row: some StoredRow) throws -> StoredSharedLink {
        StoredSharedLink(viewer: try row.string(0), container: try row.string(1),
                         environment: Environment(rawValue: try row.string(2)) ?? .development,
                         url: try row.string(3), conversationID: try row.string(4), host: try row.string(5), sender: try row.string(6),
                         eventID: try row.string(7), sentAt: try row.int64(8), title: try row.optionalString(9))
    }
}
