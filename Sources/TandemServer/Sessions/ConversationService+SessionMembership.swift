import TandemCore
import TandemStore

/// Issue 8's conversations as group sessions see them (decisions G1).
extension ConversationService: SessionMembership {
    func members(of conversationID: String, container: String, environment: Environment) throws -> Set<String>? {
        guard let conversation = try conversation(id: conversationID), conversation.container == container,
              conversation.environment == environment else { return nil }
        return Set(conversation.members)
    }

    /// The caller's oldest conversation with exactly these members, or a new one (a group when
    /// more than two people).
    func conversation(for people: Set<String>, creator: String, container: String, environment: Environment) throws -> String {
        let everyone = people.union([creator])
        let existing = try list(user: creator, container: container, environment: environment)
        if let match = existing.last(where: { Set($0.members) == everyone }) { return match.id }
        return try create(creator: creator, members: people.sorted(), title: nil, group: nil, container: container,
                          environment: environment).id
    }

    func observeMembership(_ handler: @escaping @Sendable (MembershipChange) -> Void) {
        addMembershipObserver(handler)
    }
}
