import Foundation
import TandemCore

/// What every node keeps of a live session another node owns, so that a surviving node can take
/// it over when the owner dies (decisions N33, N34): the owner publishes a whole copy when the
/// session starts, when a node joins the cluster and after a takeover, and each change after it
/// (`SessionTraffic.replicate`), in the order it applied them under the session's lock.
struct SessionReplica: Codable, Sendable {
    /// A participant and where its stream connection is.
    struct Participant: Codable, Sendable {
        var id: UUID
        var user: String
        /// The bus node (`EventBus.node`) holding the connection, and its ID there.
        var node: String
        var connection: UInt64
        /// Milliseconds since 1970.
        var joinedAt: Int64
    }

    var sessionID: UUID
    var conversationID: String
    var initiator: String
    var initiatorConnection: UInt64
    /// Milliseconds since 1970.
    var startedAt: Int64
    /// `SessionActivity.json`.
    var activity: JSONValue
    var audience: Set<String>
    var participants: [Participant]
    var store: [String: String]
    var attachments: [JournalAttachment]
    /// Reliable messages may have been numbered up to this; a successor numbers from the next (N34).
    var reserved: UInt64
    /// The copy's generation (`LiveSession.generation`, N70).
    var generation: Int = 0

    /// Whether this copy, owned by `owner`, wins over one of generation `generation` owned by
    /// `other`: the higher generation (the copy taken over last, which the nodes that took
    /// it kept), then the lower owner ID. Both owners decide alike from the same two pairs.
    func wins(over generation: Int, ownedBy other: String, owner: String) -> Bool {
        self.generation != generation ? self.generation > generation : owner < other
    }

    /// One change the owner made, in its order.
    enum Change: Codable, Sendable {
        case participants([Participant])
        /// An empty value removed the key (D36).
        case state(key: String, value: String)
        case attachments([JournalAttachment])
        case reserved(UInt64)
    }

    mutating func apply(_ change: Change) {
        switch change {
        case .participants(let list): participants = list
        case .state(let key, let value): store[key] = value.isEmpty ? nil : value
        case .attachments(let list): attachments = list
        case .reserved(let bound): reserved = max(reserved, bound)
        }
    }

    /// How many sequence numbers the owner announces at a time: one bus message per this many
    /// reliable messages.
    static let reservation: UInt64 = 1024
}

extension LiveSession {
    /// The replica of this session's state; call with the lock held. `node` is this node's.
    func replica(_ state: borrowing State, node: String) -> SessionReplica {
        SessionReplica(sessionID: id, conversationID: conversationID, initiator: initiator, initiatorConnection: initiatorConnection,
                       startedAt: startedAt, activity: state.activity.json, audience: state.audience,
                       participants: Self.replicaParticipants(state.participants, node: node), store: state.store,
                       attachments: state.attachments, reserved: state.reserved, generation: generation)
    }

    static func replicaParticipants(_ participants: [SessionParticipant], node: String) -> [SessionReplica.Participant] {
        participants.map { participant in
            let remote = participant.connection as? RemotePeer
            return SessionReplica.Participant(id: participant.id, user: participant.user, node: remote?.node ?? node,
                                              connection: remote?.connection ?? participant.connection.id, joinedAt: participant.joinedAt)
        }
    }
}
