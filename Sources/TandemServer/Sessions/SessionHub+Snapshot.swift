import Foundation
import TandemCore
import TandemStore

/// What the console shows of live group sessions (decisions C44): a copy taken under the
/// registry's and each session's lock, no connection or payload in it. With several nodes, the
/// sessions other nodes own are listed from their replicas (N38).
extension SessionHub {
    struct LiveSessionSummary: Sendable {
        struct Participant: Sendable {
            var user: String
            /// Milliseconds since 1970.
            var joinedAt: Int64
        }

        var id: String
        var conversationID: String
        /// `GroupActivity.activityIdentifier`.
        var activity: String
        var title: String?
        var initiator: String
        var startedAt: Int64
        var participants: [Participant]
        /// Conversation members who hear of the session.
        var audience: Int
        /// Messenger frames accepted so far (reliable and unreliable); nil for another node's
        /// session (counted by its owner).
        var messages: Int?
    }

    /// The live sessions of one container environment in the cluster, oldest first.
    func liveSessions(container: String, environment: Environment) -> [LiveSessionSummary] {
        registry.withLock { registry in
            let others = registry.remote.values.compactMap { remote -> LiveSessionSummary? in
                guard remote.container == container, remote.environment == environment, let replica = remote.replica else { return nil }
                return LiveSessionSummary(id: replica.sessionID.uuidString, conversationID: replica.conversationID,
                                          activity: replica.activity["identifier"]?.stringValue ?? "",
                                          title: replica.activity["metadata"]?["title"]?.stringValue, initiator: replica.initiator,
                                          startedAt: replica.startedAt,
                                          participants: replica.participants.map { .init(user: $0.user, joinedAt: $0.joinedAt) },
                                          audience: replica.audience.count, messages: nil)
            }
            return (others + registry.sessions.values.filter { $0.container == container && $0.environment == environment }.compactMap { session in
                session.state.withLock { state -> LiveSessionSummary? in
                    guard !state.ended else { return nil }
                    return LiveSessionSummary(id: session.id.uuidString, conversationID: session.conversationID,
                                              activity: state.activity.identifier, title: state.activity.metadata["title"]?.stringValue,
                                              initiator: session.initiator, startedAt: session.startedAt,
                                              participants: state.participants.map { .init(user: $0.user, joinedAt: $0.joinedAt) },
                                              audience: state.audience.count, messages: state.messages)
                }
            }).sorted { $0.startedAt < $1.startedAt }
        }
    }
}
