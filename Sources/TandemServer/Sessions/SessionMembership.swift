import TandemCore
import TandemStore

/// What group sessions need from conversations (issue 8's `ConversationService` conforms):
/// who is a member, a conversation for chosen people (the sharing-controller path), and word
/// of membership changes (decisions D35, G1).
protocol SessionMembership: Sendable {
    /// The members of a conversation, or nil when it does not exist in this container environment.
    func members(of conversationID: String, container: String, environment: Environment) throws -> Set<String>?
    /// A conversation whose members are exactly `creator` and `people`: an existing one, or a new one.
    func conversation(for people: Set<String>, creator: String, container: String, environment: Environment) throws -> String
    /// Calls `handler` after each committed membership change.
    func observeMembership(_ handler: @escaping @Sendable (MembershipChange) -> Void)
}
