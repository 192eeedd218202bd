internal import TandemCore

/// Whether a group session can start now (SharePlay: `GroupStateObserver.isEligibleForGroupSession`),
/// with the reason when not — a Tandem addition (D35).
///
/// ```swift
/// let state = try await GroupStateObserver(container.groupActivities).eligibility()
/// if !state.isEligible { print(state.reason!) }   // .noActiveConversation, .notAMember, .conversationFull
/// ```
public struct GroupStateObserver: Sendable {
    /// Why a session cannot start (D35).
    public enum Reason: String, Sendable, Hashable {
        /// No conversation is declared active on any of this user's devices (`setActiveConversation`).
        case noActiveConversation
        /// The user is not a member of the conversation.
        case notAMember
        /// The conversation has more members than a session may have (D33).
        case conversationFull
    }

    public struct Eligibility: Sendable, Hashable {
        public var isEligible: Bool
        public var reason: Reason?
        /// The conversation asked about.
        public var conversationID: String?

        public init(isEligible: Bool, reason: Reason?, conversationID: String?) {
            self.isEligible = isEligible
            self.reason = reason
            self.conversationID = conversationID
        }
    }

    let client: GroupActivities

    public init(_ client: GroupActivities) { self.client = client }

    /// Asks the server about `conversationID` (default: the latest declared active here).
    public func eligibility(in conversationID: String? = nil) async throws(TandemError) -> Eligibility {
        var body: JSONObject = [:]
        if let conversationID { body["conversationID"] = .string(conversationID) }
        let answer = try await client.link.request("groupState", body)
        return Eligibility(isEligible: answer["eligible"]?.boolValue ?? false,
                           reason: answer["reason"]?.stringValue.flatMap(Reason.init(rawValue:)),
                           conversationID: answer["conversationID"]?.stringValue)
    }

    /// `eligibility().isEligible`, false when the server cannot be asked.
    public var isEligibleForGroupSession: Bool {
        get async { (try? await eligibility().isEligible) ?? false }
    }
}
