import Foundation
import Synchronization
import TandemCore
import TandemHTTP

/// The stream WebSocket's session envelopes (decisions G3). A request carries an `id`; the
/// answer is `{"type":"reply","id":…,"result":{…}}` or `{"type":"reply","id":…,"error":
/// {serverErrorCode, reason, retryAfter?}}` (`retryAfter` in seconds, with `THROTTLED`, R39).
///
/// | type | body | result |
/// |---|---|---|
/// | `conversation.activate` / `conversation.deactivate` | `conversationID` | `{}` (D35) |
/// | `groupState` | `conversationID?` | `{eligible, reason?, conversationID?}` |
/// | `activity.activate` | `activity`, `conversationID?`, `replace?` | `{session}` |
/// | `activity.stage` | `activity`, `people` (user record names) | `{conversationID, session}` |
/// | `session.join` / `leave` / `end` | `sessionID` | join: `{participantID, session, participants, attachments, store}` |
/// | `session.setActivity` | `sessionID`, `activity` | `{}` |
/// | `session.state.set` | `sessionID`, `key`, `value` | `{}` |
/// | `journal.remove` | `sessionID`, `attachmentID` | `{}` |
/// | `invitation.open` | `invitation` (URL, token or join code) | `{conversationID, started, session}` (R20) |
///
/// Server events: `session.available`, `session.participants`, `session.activity`,
/// `session.state`, `session.invalidated` (`reason`), `journal.attachments`, `session.sent`,
/// `session.sendFailed`, `groupState.changed` (R24).
extension SessionHub {
    /// Whether `type` is a session envelope.
    static func handles(_ type: String) -> Bool {
        type.hasPrefix("session.") || type.hasPrefix("activity.") || type.hasPrefix("conversation.") || type.hasPrefix("journal.")
            || type.hasPrefix("invitation.") || type == "groupState"
    }

    /// Runs one envelope and sends its reply.
    func handle(_ type: String, _ envelope: JSONValue, on connection: any SessionPeer) {
        let id = envelope["id"] ?? .null
        do {
            if let owner = owner(of: type, envelope, on: connection) {
                return try forward(to: owner, from: connection, envelope: JSONWriter.string(envelope), frame: nil, replyID: id)
            }
            if let result = try run(type, envelope, on: connection, replyID: id) {
                _ = connection.send(text: JSONWriter.string(["type": "reply", "id": id, "result": result]))
            }
        } catch let error as CloudKitError {
            var body: JSONObject = ["serverErrorCode": .string(error.code.rawValue), "reason": .string(error.reason)]
            if let retryAfter = error.retryAfter { body["retryAfter"] = .int(Int64(retryAfter)) }
            _ = connection.send(text: JSONWriter.string(["type": "reply", "id": id, "error": .object(body)]))
        } catch {
            _ = connection.send(text: JSONWriter.string([
                "type": "reply", "id": id, "error": .object(["serverErrorCode": "INTERNAL_ERROR", "reason": "internal error"])]))
        }
    }

    /// The node that owns the session this envelope addresses, when another node does (N19):
    /// by `sessionID`, or for `activity.activate`, the conversation's live session.
    private func owner(of type: String, _ envelope: JSONValue, on connection: any SessionPeer) -> String? {
        guard bus != nil, !(connection is RemotePeer), let client = try? client(connection) else { return nil }
        if type.hasPrefix("session.") || type == "journal.remove" {
            guard let text = envelope["sessionID"]?.stringValue, let id = UUID(uuidString: text) else { return nil }
            return remoteOwner(ofSession: id, conversation: nil, client: client)
        }
        guard type == "activity.activate" else { return nil }
        return remoteOwner(ofSession: nil, conversation: envelope["conversationID"]?.stringValue ?? client.declared.last, client: client)
    }

    /// nil: the handler replied itself (join), or the owner will (forwarded).
    private func run(_ type: String, _ body: JSONValue, on connection: any SessionPeer, replyID: JSONValue) throws -> JSONValue? {
        func sessionID() throws(CloudKitError) -> UUID {
            guard let text = body["sessionID"]?.stringValue, let id = UUID(uuidString: text) else {
                throw .badRequest("'sessionID' must be a session's UUID")
            }
            return id
        }
        func conversation() throws(CloudKitError) -> String {
            guard let id = body["conversationID"]?.stringValue, !id.isEmpty else { throw .badRequest("'conversationID' is required") }
            return try Self.checkConversationID(id)
        }
        switch type {
        case "conversation.activate", "conversation.deactivate":
            declare(connection, try conversation(), active: type == "conversation.activate")
            return .object([:])
        case "groupState":
            let client = try client(connection)
            let id = try body["conversationID"]?.stringValue.map(Self.checkConversationID) ?? client.declared.last
            let reason = try ineligibility(user: client.user, conversationID: id, container: client.container,
                                           environment: client.environment)
            var result: JSONObject = ["eligible": .bool(reason == nil)]
            if let reason { result["reason"] = .string(reason) }
            if let id { result["conversationID"] = .string(id) }
            return .object(result)
        case "activity.activate":
            let session = try activate(connection, conversationID: try body["conversationID"]?.stringValue.map(Self.checkConversationID),
                                       activity: try SessionActivity.parse(body["activity"]), replace: body["replace"]?.boolValue ?? false)
            return .object(["session": session])
        case "activity.stage":
            let client = try client(connection)
            let activity = try SessionActivity.parse(body["activity"])
            let people = try ConversationRoutes.strings(body.objectValue ?? [:], "people", limit: ConversationService.memberLimit)
            guard !people.isEmpty, people.allSatisfy(Self.isIdentifier) else {
                throw CloudKitError.badRequest("'people' must list the user record names to share with (at most 256 bytes each, no control characters)")
            }
            let conversationID = try membership.conversation(for: Set(people), creator: client.user, container: client.container,
                                                             environment: client.environment)
            declare(connection, conversationID, active: true)
            if bus != nil, !(connection is RemotePeer),
               let owner = remoteOwner(ofSession: nil, conversation: conversationID, client: client) {
                // The conversation's session lives on another node: it stages there, finding the same conversation (N37).
                try forward(to: owner, from: connection, envelope: JSONWriter.string(body), frame: nil, replyID: replyID)
                return nil
            }
            let session = try activate(connection, conversationID: conversationID, activity: activity,
                                       replace: body["replace"]?.boolValue ?? false)
            return .object(["conversationID": .string(conversationID), "session": session])
        case "invitation.open":
            guard let reference = body["invitation"]?.stringValue, !reference.isEmpty else {
                throw CloudKitError.badRequest("'invitation' must be an invitation's URL, token or join code")
            }
            return try open(connection, invitation: reference)
        case "session.join":
            try join(connection, sessionID: try sessionID(), replyID: replyID)
            return nil
        case "session.leave":
            try leave(connection, sessionID: try sessionID())
            return .object([:])
        case "session.end":
            try end(connection, sessionID: try sessionID())
            return .object([:])
        case "session.setActivity":
            let client = try client(connection)
            let session = try session(try sessionID(), for: client)
            _ = try participant(connection, in: session)
            try setActivity(session, try SessionActivity.parse(body["activity"]))
            return .object([:])
        case "session.state.set":
            guard let key = body["key"]?.stringValue, let value = body["value"]?.stringValue else {
                throw CloudKitError.badRequest("session.state.set needs 'key' and 'value' strings")
            }
            try setState(connection, sessionID: try sessionID(), key: key, value: value)
            return .object([:])
        case "journal.remove":
            guard let text = body["attachmentID"]?.stringValue, let attachment = UUID(uuidString: text) else {
                throw CloudKitError.badRequest("'attachmentID' must be an attachment's UUID")
            }
            try removeAttachment(connection, sessionID: try sessionID(), attachmentID: attachment)
            return .object([:])
        default:
            throw CloudKitError.badRequest("unknown envelope type '\(type)'")
        }
    }

    /// `id` when it can name a conversation: not empty, at most 256 UTF-8 bytes, no control character
    /// (a NUL would reach the store, which refuses it: the reply was `INTERNAL_ERROR`; W21).
    /// - Throws: `BAD_REQUEST` otherwise.
    static func checkConversationID(_ id: String) throws(CloudKitError) -> String {
        guard !id.isEmpty, isIdentifier(id) else {
            throw .badRequest("'conversationID' must be a conversation's identifier (at most 256 bytes, no control characters)")
        }
        return id
    }

    /// Whether `id` can name a conversation or a person on the stream: at most 256 UTF-8 bytes
    /// and no control character (W21; a NUL in `activity.stage`'s `people` was `INTERNAL_ERROR`).
    static func isIdentifier(_ id: String) -> Bool {
        id.utf8.count <= 256 && !id.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    }
}
