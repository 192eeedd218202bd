import Foundation
public import TandemCore
public import TandemStore

/// Conversations (the Messages role of Shared with You): 1:1 and group conversations, their
/// members, messages with links, pins, contacts and consent. Routes under
/// `/tandem/1/{container}/{environment}/conversations/...`.
///
/// Every write commits in one transaction and is then published by the `ConversationHub`:
/// timeline events to members' streams (`{"type":"conversation.event"}`), membership changes
/// to observers, and highlight snapshots. Other services use `isMember(conversation:user:)`
/// and `addMembershipObserver(_:)`.
public final class ConversationService: Sendable {
    /// Members of one conversation, the creator included.
    public static let memberLimit = 100

    let store: any Store
    let hub: ConversationHub
    /// Told of the share records a *Collaborate* send changed (R1), as membership prompts do.
    let changeHub: ChangeHub?
    /// Participants per share, the owner included (a *Collaborate* send stops there).
    let participantLimit: Int
    /// `--public-url`: a Tandem share's collaboration shows `{publicURL}/share/{shortGUID}`
    /// whatever form of its URL was sent (W18); nil when not configured.
    let publicURL: String?

    init(store: any Store, hub: ConversationHub, changeHub: ChangeHub? = nil, participantLimit: Int = Limits.participantsPerShare,
         publicURL: String? = nil) {
        self.store = store
        self.hub = hub
        self.changeHub = changeHub
        self.participantLimit = participantLimit
        self.publicURL = publicURL
    }

    // MARK: For other services

    /// Whether `user` (a user record name) is a current member of the conversation; false for
    /// an unknown conversation.
    public func isMember(conversation: String, user: String) throws -> Bool {
        try store.read { try $0.isMember(conversation: conversation, user: user) }
    }

    /// The conversation with its current members, or nil.
    public func conversation(id: String) throws -> StoredConversation? {
        try store.read { try $0.conversation(id: id) }
    }

    /// Calls `observer` after each committed membership change (a conversation created counts
    /// as every member added), on the hub's queue; one conversation's changes in commit order
    /// (its writes all take the timeline's next position: decisions P3, P4). It must return
    /// quickly.
    public func addMembershipObserver(_ observer: @escaping @Sendable (MembershipChange) -> Void) {
        hub.addMembershipObserver(observer)
    }

    // MARK: Conversations

    /// Starts a conversation of `creator` with `members` (user record names, emails or phone
    /// numbers). One other member and no `group` flag makes a 1:1 conversation; otherwise a
    /// group. Each member other than the creator gets a `memberAdded` event.
    /// - Throws: `BAD_REQUEST` for no members, the creator alone, a 1:1 with several people,
    ///   a title over 256 characters; `NOT_FOUND` naming a handle with no account;
    ///   `LIMIT_EXCEEDED` past `memberLimit`.
    public func create(creator: String, members handles: [String], title: String?, group: Bool?,
                       container: String, environment: Environment) throws -> StoredConversation {
        if let title, title.count > 256 { throw CloudKitError.badRequest("a conversation title has at most 256 characters") }
        guard handles.count < Self.memberLimit else {
            throw CloudKitError(.limitExceeded, "a conversation has at most \(Self.memberLimit) members, the creator included")
        }
        let now = Clock.milliseconds()
        let id = UUID.random().uuidString.lowercased()
        let hub = self.hub
        return try store.write({ tx -> (StoredConversation, ConversationHub.Effects) in
            var members = [creator]
            for handle in handles {
                let user = try Self.resolve(tx, handle)
                if !members.contains(user) { members.append(user) }
            }
            guard members.count > 1 else { throw CloudKitError.badRequest("a conversation needs at least one member besides you") }
            let isGroup = group ?? (members.count > 2)
            if !isGroup && members.count != 2 {
                throw CloudKitError.badRequest("a 1:1 conversation has exactly one other member; send \"group\": true for \(members.count - 1)")
            }
            let conversation = StoredConversation(id: id, container: container, environment: environment, isGroup: isGroup,
                                                  title: title, createdBy: creator, createdAt: now, members: members)
            try tx.insertConversation(conversation)
            var effects = ConversationHub.Effects(container: container, environment: environment)
            let everyone = Set(members)
            for member in members {
                effects.membership.append(MembershipChange(kind: .added, conversationID: id, container: container, environment: environment,
                                                           member: member, actor: creator))
                guard member != creator else { continue }
                let event = try Self.append(tx, conversation: id, kind: .memberAdded, actor: creator, subject: member, body: [:], at: now)
                effects.envelopes.append((ConversationCodec.envelope(event), everyone))
            }
            effects.envelopes.insert((["type": "conversation.created", "conversation": ConversationCodec.conversation(conversation)], everyone), at: 0)
            return (conversation, effects)
        }, afterCommit: { hub.publish($0.1) }).0
    }

    /// The conversations `user` is in, newest first.
    public func list(user: String, container: String, environment: Environment) throws -> [StoredConversation] {
        try store.read { try $0.conversations(user: user, container: container, environment: environment) }
    }

    /// One conversation as its member sees it.
    /// - Throws: `NOT_FOUND` when it does not exist or the caller is not a member.
    public func lookup(_ id: String, viewer: String, in place: Place) throws -> StoredConversation {
        try store.read { try Self.requireMember($0, conversation: id, user: viewer, in: place) }
    }

    // MARK: Members

    /// Adds `member` (user record name, email or phone) to a group conversation; a
    /// `memberAdded` event for every member, observers told, and a membership prompt for each
    /// owner of a collaboration shared there (membership sync).
    /// - Throws: `NOT_FOUND` for an unknown conversation, a caller who is not a member, or a
    ///   handle with no account; `BAD_REQUEST` for a 1:1 conversation; `EXISTS` when already a
    ///   member; `LIMIT_EXCEEDED` past `memberLimit`.
    public func addMember(_ handle: String, conversation id: String, actor: String, in place: Place) throws -> StoredConversationEvent {
        let now = Clock.milliseconds()
        let hub = self.hub
        return try store.write({ tx -> (StoredConversationEvent, ConversationHub.Effects) in
            let conversation = try Self.requireMember(tx, conversation: id, user: actor, in: place)
            guard conversation.isGroup else { throw CloudKitError.badRequest("a 1:1 conversation's members are fixed; start a group conversation") }
            let member = try Self.resolve(tx, handle)
            guard !conversation.members.contains(member) else { throw CloudKitError(.exists, "\(handle) is already a member") }
            guard conversation.members.count < Self.memberLimit else {
                throw CloudKitError(.limitExceeded, "a conversation has at most \(Self.memberLimit) members")
            }
            try tx.addMember(conversation: id, user: member, at: now)
            let event = try Self.append(tx, conversation: id, kind: .memberAdded, actor: actor, subject: member, body: [:], at: now)
            var effects = ConversationHub.Effects(container: conversation.container, environment: conversation.environment)
            effects.envelopes.append((ConversationCodec.envelope(event), Set(conversation.members + [member])))
            effects.membership.append(MembershipChange(kind: .added, conversationID: id, container: conversation.container,
                                                       environment: conversation.environment, member: member, actor: actor))
            try MembershipSync.prompt(tx, conversation: conversation, person: member, change: .add, at: now, effects: &effects)
            return (event, effects)
        }, afterCommit: { hub.publish($0.1) }).0
    }

    /// Removes `member` from a group conversation (any member may remove anyone, themselves
    /// included: leaving). Their link rows of that conversation go with them, so its links stop
    /// being their highlights.
    /// - Throws: `NOT_FOUND` for an unknown conversation, a caller or member who is not a
    ///   member; `BAD_REQUEST` for a 1:1 conversation.
    public func removeMember(_ handle: String, conversation id: String, actor: String, in place: Place) throws -> StoredConversationEvent {
        let now = Clock.milliseconds()
        let hub = self.hub
        return try store.write({ tx -> (StoredConversationEvent, ConversationHub.Effects) in
            let conversation = try Self.requireMember(tx, conversation: id, user: actor, in: place)
            guard conversation.isGroup else { throw CloudKitError.badRequest("a 1:1 conversation's members are fixed") }
            let member = try Self.resolve(tx, handle)
            guard conversation.members.contains(member) else { throw CloudKitError(.notFound, "\(handle) is not a member of this conversation") }
            try tx.removeMember(conversation: id, user: member)
            let event = try Self.append(tx, conversation: id, kind: .memberRemoved, actor: actor, subject: member, body: [:], at: now)
            var effects = ConversationHub.Effects(container: conversation.container, environment: conversation.environment)
            effects.envelopes.append((ConversationCodec.envelope(event), Set(conversation.members)))
            effects.membership.append(MembershipChange(kind: .removed, conversationID: id, container: conversation.container,
                                                       environment: conversation.environment, member: member, actor: actor))
            effects.highlightViewers.insert(member)
            try MembershipSync.prompt(tx, conversation: conversation, person: member, change: .remove, at: now, effects: &effects)
            return (event, effects)
        }, afterCommit: { hub.publish($0.1) }).0
    }

    // MARK: Helpers

    /// The account a handle names: a user record name (`_…`), an email, or a phone number.
    static func resolve(_ reader: any StoreReading, _ handle: String) throws -> String {
        let trimmed = handle.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty, trimmed.count <= 256 else { throw CloudKitError.badRequest("a member is a user record name, an email or a phone number") }
        let lookup: UserIdentity = trimmed.hasPrefix("_") ? UserIdentity(userRecordName: trimmed)
            : trimmed.contains("@") ? UserIdentity(emailAddress: trimmed) : UserIdentity(phoneNumber: trimmed)
        guard let user = try reader.user(matching: lookup) else { throw CloudKitError(.notFound, "no user '\(trimmed)'") }
        return user.recordName
    }

    /// The container and environment a request names (W1: conversations live in one of each).
    public struct Place: Sendable, Hashable {
        public var container: String
        public var environment: Environment

        public init(container: String, environment: Environment) {
            self.container = container
            self.environment = environment
        }
    }

    /// The conversation, when `user` is a member and it lives in `place` (the request's
    /// container and environment, W1); `NOT_FOUND` otherwise (a stranger learns nothing about
    /// whether it exists).
    static func requireMember(_ reader: any StoreReading, conversation id: String, user: String,
                              in place: Place) throws -> StoredConversation {
        guard let conversation = try reader.conversation(id: id), conversation.members.contains(user),
              conversation.container == place.container, conversation.environment == place.environment else {
            throw CloudKitError(.notFound, "no conversation '\(id)' of yours")
        }
        return conversation
    }

    static func append(_ tx: any StoreWriting, conversation: String, kind: StoredConversationEvent.Kind, actor: String, subject: String?,
                       collaboration: String? = nil, body: JSONObject, at now: Int64) throws -> StoredConversationEvent {
        var event = StoredConversationEvent(conversationID: conversation, eventID: UUID.random().uuidString.lowercased(), kind: kind, actor: actor,
                                            subject: subject, collaborationID: collaboration, body: JSONWriter.bytes(.object(body)), createdAt: now)
        event.seq = try tx.appendEvent(event)
        return event
    }
}
