import TandemCore
import TandemStore

/// Declared conversations and word of eligibility changes (D35; decisions R23–R24): every change
/// that can turn `groupState`'s answer for a user — a declaration made or withdrawn on any of
/// their connections, a connection closing, a membership change of the conversation — sends
/// `{"type":"groupState.changed"}` to that user's stream connections, and the SDK asks
/// `groupState` again (`GroupStateObserver.eligibilityUpdates`). A hint, not the answer: the
/// answer depends on which conversation each client asks about.
///
/// Across nodes (N57): each node publishes its connections' declarations (`SessionTraffic.declared`)
/// and counts the other nodes' with its own; a node heard for the first time, and every node after
/// the bus may have lost messages, is sent them again and asked for its own; a node not heard
/// for 3 s (N24) takes its declarations with it, and the people who declared there hear the hint.
extension SessionHub {
    /// One of another node's connections' declared conversations, as it published them.
    struct Declaration: Sendable {
        var node: String
        var user: String
        var container: String
        var environment: Environment
        var conversations: [String]
    }

    /// Declares `conversationID` active (last) on `connection`, or withdraws it, and tells the
    /// user's connections.
    func declare(_ connection: any SessionPeer, _ conversationID: String, active: Bool) {
        let client = registry.withLock { registry -> StreamClient? in
            registry.clients[connection.id]?.declared.removeAll { $0 == conversationID }
            if active { registry.clients[connection.id]?.declared.append(conversationID) }
            return registry.clients[connection.id]
        }
        guard let client else { return }
        publishDeclared(client, declared: client.declared)
        groupStateChanged(for: [client.user], container: client.container, environment: client.environment)
    }

    /// Tells the other nodes what one of this node's own connections declared (not a stand-in's:
    /// its node does that).
    func publishDeclared(_ client: StreamClient, declared: [String]) {
        guard let bus, !(client.connection is RemotePeer) else { return }
        bus.publish(.session(SessionTraffic(container: client.container, environment: client.environment.rawValue,
                                            kind: .declared(connection: client.connection.id, user: client.user,
                                                            conversations: declared))))
    }

    /// Sends this node's declarations and asks `node` (every node when nil) for its own: on
    /// hearing a node for the first time, and after the bus may have lost messages (N6).
    func resendDeclarations(wanting node: String?) {
        publishDeclarations()
        bus?.publish(.session(SessionTraffic(container: "", environment: "", kind: .declarationsWanted(from: node))))
    }

    /// Every declaration of this node's connections.
    func publishDeclarations() {
        let clients = registry.withLock { $0.clients.values.filter { !$0.declared.isEmpty && !($0.connection is RemotePeer) } }
        for client in clients { publishDeclared(client, declared: client.declared) }
    }

    /// Another node's connection declared `conversations` (empty: none any more).
    func heard(declared conversations: [String], connection: UInt64, user: String, from node: String, container: String,
               environment: Environment) {
        registry.withLock { registry in
            let key = "\(node):\(connection)"
            if conversations.isEmpty { registry.declaredElsewhere.removeValue(forKey: key) } else {
                registry.declaredElsewhere[key] = Declaration(node: node, user: user, container: container, environment: environment,
                                                              conversations: conversations)
            }
        }
        groupStateChanged(for: [user], container: container, environment: environment)
    }

    /// Forgets the declarations of nodes `gone` (call with the registry's lock held); returns
    /// those who declared there, to be told.
    static func forgetDeclarations(of gone: Set<String>, in registry: inout Registry) -> [Declaration] {
        let dropped = registry.declaredElsewhere.filter { gone.contains($0.value.node) }
        for key in dropped.keys { registry.declaredElsewhere.removeValue(forKey: key) }
        return Array(dropped.values)
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
