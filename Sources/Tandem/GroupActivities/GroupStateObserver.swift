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

    /// Eligibility as it changes (SharePlay: the `$isEligibleForGroupSession` publisher), so a
    /// SharePlay button can enable itself live: the current answer first, then each different
    /// one. Driven by the server (R24): it tells this user's stream connections when a
    /// declaration changes on any of their devices, a connection with declarations closes, or
    /// the conversation's membership changes (someone added or removed, the conversation
    /// growing past the participant limit); the observer then asks again. No polling. After
    /// the stream drops it asks once more (reopening it); an answer that cannot be had is
    /// skipped. Ends when the iterating task is cancelled.
    /// - Parameter conversationID: the conversation asked about; default: the latest declared
    ///   active on this device, as `eligibility(in:)`.
    public func eligibilityUpdates(in conversationID: String? = nil) -> AsyncStream<Eligibility> {
        let hints = client.link.groupStateHints.stream(initial: ())
        return AsyncStream { continuation in
            let task = Task {
                var last: Eligibility?
                for await _ in hints {
                    guard let current = try? await eligibility(in: conversationID) else { continue }
                    if current != last { continuation.yield(current) }
                    last = current
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `eligibility().isEligible`, false when the server cannot be asked.
    public var isEligibleForGroupSession: Bool {
        get async { (try? await eligibility().isEligible) ?? false }
    }
}
