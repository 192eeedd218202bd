import Foundation
import TandemCore
import TandemStore

/// Wire shapes of conversations and their timeline events.
enum ConversationCodec {
    /// `{"conversationID", "isGroup", "title", "createdBy", "createdAt", "members": [...]}`.
    static func conversation(_ conversation: StoredConversation) -> JSONValue {
        var object: JSONObject = ["conversationID": .string(conversation.id), "isGroup": .bool(conversation.isGroup),
                                  "createdBy": .string(conversation.createdBy), "createdAt": .int(conversation.createdAt),
                                  "members": .array(conversation.members.map { .string($0) })]
        if let title = conversation.title { object["title"] = .string(title) }
        return .object(object)
    }

    /// `{"eventID", "conversationID", "seq", "kind", "actor", "createdAt"}` plus, by kind:
    /// `member` (memberAdded/memberRemoved), `text`/`links`/`collaborationIdentifier` (message),
    /// `notice` (notice).
    static func event(_ event: StoredConversationEvent) -> JSONValue {
        var object: JSONObject = ["eventID": .string(event.eventID), "conversationID": .string(event.conversationID), "seq": .int(event.seq),
                                  "kind": .string(event.kind.rawValue), "actor": .string(event.actor), "createdAt": .int(event.createdAt)]
        switch event.kind {
        case .memberAdded, .memberRemoved:
            if let subject = event.subject { object["member"] = .string(subject) }
        case .message, .notice:
            if case .object(let body)? = try? JSONParser.parse(event.body) {
                for entry in body.entries { object[entry.key] = entry.value }
            }
        }
        return .object(object)
    }

    /// `{"type": "conversation.event", "event": {…}}` on the stream.
    static func envelope(_ stored: StoredConversationEvent) -> JSONValue {
        ["type": "conversation.event", "event": event(stored)]
    }

    static func link(_ link: MessageLinks.Link) -> JSONValue {
        var object: JSONObject = ["url": .string(link.url)]
        if let title = link.title { object["title"] = .string(title) }
        if let image = link.imageURL { object["imageURL"] = .string(image) }
        return .object(object)
    }
}
