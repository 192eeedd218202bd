public import Foundation

/// Someone in a group session (SharePlay: `Participant`): an ID that is fresh for each join and
/// carries no personal data (decisions D34).
public struct Participant: Sendable, Hashable, Identifiable {
    public let id: UUID

    public init(id: UUID) { self.id = id }
}

/// Who a message goes to (SharePlay: `Participants`): every other active participant, or some.
/// There is no `.except`: subtract from `activeParticipants`. The sender never gets its own
/// message (D30).
public struct Participants: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case all
        case only(Set<Participant>)
    }
    let storage: Storage

    /// Every active participant but the sender.
    public static let all = Participants(storage: .all)
    /// Only these participants (an empty set sends nothing).
    public static func only(_ participants: Set<Participant>) -> Participants { Participants(storage: .only(participants)) }
    public static func only(_ participant: Participant) -> Participants { Participants(storage: .only([participant])) }
}

/// A session's state (SharePlay: `GroupSession.State`): `.waiting` until `join()`, `.joined`,
/// then `.invalidated(reason:)` for good.
public enum GroupSessionState: Sendable, Hashable {
    case waiting
    case joined
    case invalidated(reason: InvalidationReason)

    /// Why a session ended for this participant (Apple carries an `Error`; Tandem names the cases).
    public enum InvalidationReason: String, Sendable, Hashable {
        /// This participant called `leave()`.
        case left
        /// Someone called `end()` (or started another activity with `replacingExisting`).
        case endedByParticipant
        /// The conversation ended, or this user was removed from it.
        case conversationEnded
        /// Everybody who had joined left.
        case everyoneLeft
        /// The initiator left an activity with `lifetimePolicy = .endsWhenInitiatorLeaves`.
        case initiatorLeft
        /// The stream connection was lost.
        case error
    }
}
