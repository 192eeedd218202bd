import Synchronization
import TandemCore
import TandemStore

/// Declared conversations and word of eligibility changes (D35; decisions R23–R24): every change
/// that can turn `groupState`'s answer for a user — a declaration made or withdrawn on any of
/// their connections here, a connection closing, a membership change of the conversation — sends
/// `{"type":"groupState.changed"}` to that user's stream connections on this node, and the SDK
/// asks `groupState` again (`GroupStateObserver.eligibilityUpdates`). A hint, not the answer:
/// the answer depends on which conversation each client asks about.
extension SessionHub {
    /// Declares `conversationID` active (last) on `connection`, or withdraws it, and tells the
    /// user's connections.
    func declare(_ connection: any SessionPeer, _ conversationID: String, active: Bool) {
        let client = registry.withLock { registry -> StreamClient? in
            registry.clients[connection.id]?.declared.removeAll { $0 == conversationID }
            if active { registry.clients[connection.id]?.declared.append(conversationID) }
            return registry.clients[connection.id]
        }
        if let client { groupStateChanged(for: [client.user], container: client.container, environment: client.environment) }
    }

    /// Sends the hint to every stream connection of `users` on this node.
    func groupStateChanged(for users: Set<String>, container: String, environment: Environment) {
        let text = JSONWriter.string(["type": "groupState.changed"])
        for connection in connections(of: users, container: container, environment: environment) { _ = connection.send(text: text) }
    }

    /// A membership change can make the changed member, and (a conversation growing past the
    /// participant limit, or shrinking below it) every member, eligible or not.
    func membershipChangedGroupState(_ change: MembershipChange) {
        let members = (try? membership.members(of: change.conversationID, container: change.container, environment: change.environment)) ?? nil
        groupStateChanged(for: (members ?? []).union([change.member]), container: change.container, environment: change.environment)
    }
}
