import Foundation
import TandemCore
import TandemStore

/// Wire shapes of collaborations and membership prompts.
enum CollaborationCodec {
    /// `{"collaborationIdentifier", "url", "title", "creationDate", "contentType", "owner", "kind"}`.
    static func collaboration(_ collaboration: StoredCollaboration) -> JSONValue {
        var object: JSONObject = ["collaborationIdentifier": .string(collaboration.id), "url": .string(collaboration.url),
                                  "creationDate": .int(collaboration.createdAt), "contentType": .string(collaboration.contentType),
                                  "owner": .string(collaboration.owner), "kind": .string(collaboration.kind.rawValue)]
        if let title = collaboration.title { object["title"] = .string(title) }
        return .object(object)
    }

    /// `{"promptID", "conversationID", "person", "change": "add"|"remove", "state", "message",
    /// "collaborations": [{collaboration}], "createdAt"}`; `message` is the banner text.
    static func prompt(_ prompt: StoredMembershipPrompt, _ reader: any StoreReading) throws -> JSONValue {
        let collaborations = try prompt.collaborations.compactMap { try reader.collaboration(id: $0, container: prompt.container, environment: prompt.environment) }
        // The owner shares the conversation with the person (W16), so their given name may be
        // shown (R32); an email address or phone number never is (T6).
        let person = try reader.user(matching: UserIdentity(userRecordName: prompt.person))
        let given = person?.givenName.flatMap { $0.isEmpty ? nil : $0 }
        let count = collaborations.count
        let noun = count == 1 ? "shared document" : "\(count) shared documents"
        let message = prompt.change == .add ? "Add \(given ?? "the new member") to your \(noun)"
                                            : "Remove \(given ?? "the member who left") from your \(noun)"
        return ["promptID": .string(prompt.id), "conversationID": .string(prompt.conversationID), "person": .string(prompt.person),
                "change": .string(prompt.change.rawValue), "state": .string(prompt.state.rawValue), "message": .string(message),
                "createdAt": .int(prompt.createdAt), "collaborations": .array(collaborations.map(collaboration))]
    }
}
