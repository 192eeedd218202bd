import TandemCore

/// Component schemas for the minimal conversations (decisions G1); group session traffic itself
/// runs on the stream WebSocket (SessionEnvelopes.swift, decisions G3).
extension OpenAPISchemas {
    static var sessions: JSONObject {
        [
            "ConversationCreateRequest": object(["members": array(string)], required: ["members"]),
            "ConversationMemberRequest": object(["conversationID": string, "userRecordName": string],
                                                required: ["conversationID", "userRecordName"]),
            "Conversation": object(["conversationID": string, "members": array(string)]),
        ]
    }
}
