import Synchronization
import TandemCore
import TandemStore

/// The minimal conversations group sessions run on until issue 8's conversations replace them
/// (decisions G1): `POST /tandem/1/{c}/{env}/conversations` `{members: [userRecordName]}` and
/// `conversations/members/add|remove` `{conversationID, userRecordName}`; only members change members.
final class SessionConversations: SessionMembership {
    let store: SQLiteStore
    private let observers = Mutex<[@Sendable (MembershipChange) -> Void]>([])

    init(store: SQLiteStore) { self.store = store }

    func members(of conversationID: String, container: String, environment: Environment) throws -> Set<String>? {
        try store.sessionConversationMembers(conversationID, container: container, environment: environment)
    }

    func conversation(for people: Set<String>, creator: String, container: String, environment: Environment) throws -> String {
        let everyone = people.union([creator])
        if let existing = try store.sessionConversations(withMembers: everyone, container: container, environment: environment).first {
            return existing
        }
        return try create(members: people, creator: creator, container: container, environment: environment)
    }

    func observeMembership(_ handler: @escaping @Sendable (MembershipChange) -> Void) {
        observers.withLock { $0.append(handler) }
    }

    /// - Throws: `BAD_REQUEST` for an unknown member.
    func create(members: Set<String>, creator: String, container: String, environment: Environment) throws -> String {
        for member in members where try store.read({ try $0.user(recordNameOrEmail: member) })?.recordName != member {
            throw CloudKitError.badRequest("no user '\(member)'")
        }
        return try store.createSessionConversation(container: container, environment: environment, creator: creator, members: members)
    }

    /// Adds or removes `user`; the caller must be a member. Publishes the change after commit.
    /// - Throws: `NOT_FOUND` when the conversation does not exist or the caller is not in it.
    func change(_ conversationID: String, user: String, adding: Bool, caller: String, container: String,
                environment: Environment) throws {
        guard let members = try members(of: conversationID, container: container, environment: environment),
              members.contains(caller) else {
            throw CloudKitError(.notFound, "no conversation '\(conversationID)'")
        }
        if adding, try store.read({ try $0.user(recordNameOrEmail: user) })?.recordName != user {
            throw CloudKitError.badRequest("no user '\(user)'")
        }
        guard try store.changeSessionConversationMember(conversationID, user: user, adding: adding) else { return }
        let change = MembershipChange(container: container, environment: environment, conversationID: conversationID,
                                      user: user, kind: adding ? .added : .removed)
        for observer in observers.withLock({ $0 }) { observer(change) }
    }
}
