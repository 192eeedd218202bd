import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Why a session ended for a participant (SharePlay: `GroupSession.State.invalidated(reason:)`).
enum InvalidationReason: String, Sendable {
    case left, endedByParticipant, conversationEnded, everyoneLeft, initiatorLeft, error
}

/// One journal attachment (SharePlay: `GroupSessionJournal.Attachment`): bytes in the journal's
/// content-addressed files, metadata as the app encoded it.
struct JournalAttachment: Codable, Sendable {
    var id: UUID
    var checksum: String
    var size: Int
    var metadata: String
    var createdAt: Int64

    var json: JSONValue {
        .object(["id": .string(id.uuidString), "size": .int(Int64(size)), "checksum": .string(checksum),
                 "metadata": .string(metadata), "createdAt": .int(createdAt)])
    }
}

/// A joined participant: a fresh ID per join (D34) bound to one stream connection.
struct SessionParticipant: Sendable {
    var id: UUID
    var user: String
    var connection: any SessionPeer
    var bucket: TokenBucket
    /// Milliseconds since 1970 (the console's live sessions, decisions C44).
    var joinedAt: Int64
}

/// One live session of a conversation and activity; held in memory on this node (decisions G2).
/// Every delivery to its participants happens under `state`'s lock, so all of them see events
/// and reliable messages in one order (D31).
final class LiveSession: Sendable {
    struct State: Sendable {
        var activity: SessionActivity
        var participants: [SessionParticipant] = []
        /// Conversation members who hear of the session (its invitation, activity, end).
        var audience: Set<String>
        var sequence: UInt64 = 0
        /// With a bus: sequence numbers up to this one are announced to the other nodes as
        /// possibly used, so a node taking the session over starts above it (N34).
        var reserved: UInt64 = 0
        var store: [String: String] = [:]
        var attachments: [JournalAttachment] = []
        var ended = false
        /// Messenger frames accepted from participants, reliable and not (decisions C44).
        var messages = 0
    }

    let id: UUID
    let container: String
    let environment: Environment
    let conversationID: String
    let initiator: String
    let initiatorConnection: UInt64
    /// Milliseconds since 1970.
    let startedAt: Int64
    /// 0 for the copy the session started as, one more at each takeover (N70): of two copies of
    /// one session (after a partition), the higher generation is the one the others kept.
    let generation: Int
    let state: Locked<State>

    /// `id` and `startedAt` (milliseconds since 1970) are given when a node takes the session
    /// over from a dead owner (N33); a new session gets fresh ones.
    init(id: UUID = UUID.random(), container: String, environment: Environment, conversationID: String, initiator: String,
         initiatorConnection: UInt64, activity: SessionActivity, audience: Set<String>, startedAt: Int64 = Clock.milliseconds(),
         generation: Int = 0) {
        self.id = id
        self.generation = generation
        self.container = container
        self.environment = environment
        self.conversationID = conversationID
        self.initiator = initiator
        self.initiatorConnection = initiatorConnection
        self.startedAt = startedAt
        state = Locked(State(activity: activity, audience: audience))
    }

    /// `{sessionID, conversationID, activity, initiatorConnectionID}`.
    func json(_ activity: SessionActivity) -> JSONValue {
        Self.json(id: id, conversationID: conversationID, activity: activity.json, initiatorConnection: initiatorConnection)
    }

    static func json(id: UUID, conversationID: String, activity: JSONValue, initiatorConnection: UInt64) -> JSONValue {
        .object(["sessionID": .string(id.uuidString), "conversationID": .string(conversationID), "activity": activity,
                 "initiatorConnectionID": .int(Int64(initiatorConnection))])
    }

    static func participantsJSON(_ participants: [SessionParticipant]) -> JSONValue {
        .array(participants.map { .object(["id": .string($0.id.uuidString)]) })
    }

    static func storeJSON(_ store: [String: String]) -> JSONValue {
        .object(JSONObject(store.sorted { $0.key < $1.key }.map { (key: $0.key, value: JSONValue.string($0.value)) }))
    }

    /// Sends a JSON event to every participant. Call with the lock held.
    static func broadcast(_ event: JSONValue, to participants: [SessionParticipant], except: UUID? = nil) {
        let text = JSONWriter.string(event)
        for participant in participants where participant.id != except { _ = participant.connection.send(text: text) }
    }
}
