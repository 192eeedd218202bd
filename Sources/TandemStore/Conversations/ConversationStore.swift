/// A conversation as stored (the Messages role): 1:1 or group, with its current members.
public struct StoredConversation: Sendable, Hashable {
    /// Opaque, globally unique (a lowercase UUID).
    public var id: String
    public var container: String
    public var environment: Environment
    public var isGroup: Bool
    public var title: String?
    public var createdBy: String
    public var createdAt: Int64
    /// User record names of the current members.
    public var members: [String]

    public init(id: String, container: String, environment: Environment, isGroup: Bool, title: String?, createdBy: String,
                createdAt: Int64, members: [String]) {
        self.id = id
        self.container = container
        self.environment = environment
        self.isGroup = isGroup
        self.title = title
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.members = members
    }
}

/// One entry of a conversation's timeline: a message, a membership event or a notice.
public struct StoredConversationEvent: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case message, memberAdded, memberRemoved, notice
    }

    /// Position in the timeline (increases across all conversations); 0 before insertion.
    public var seq: Int64
    public var conversationID: String
    /// Opaque event (message) identifier.
    public var eventID: String
    public var kind: Kind
    /// The sender, the member who added or removed, or the actor of a notice.
    public var actor: String
    /// The member added or removed; for a mention notice the only person who sees it.
    public var subject: String?
    /// The collaboration a notice is about.
    public var collaborationID: String?
    /// The event's content as JSON text (written by the service).
    public var body: [UInt8]
    public var createdAt: Int64

    public init(seq: Int64 = 0, conversationID: String, eventID: String, kind: Kind, actor: String, subject: String? = nil,
                collaborationID: String? = nil, body: [UInt8], createdAt: Int64) {
        self.seq = seq
        self.conversationID = conversationID
        self.eventID = eventID
        self.kind = kind
        self.actor = actor
        self.subject = subject
        self.collaborationID = collaborationID
        self.body = body
        self.createdAt = createdAt
    }
}

/// A link as one viewer received it in one conversation: the latest message that shared it (D21).
public struct StoredSharedLink: Sendable, Hashable {
    public var viewer: String
    public var container: String
    public var environment: Environment
    public var url: String
    public var conversationID: String
    /// The URL's host, lowercased (the highlight list filters by the app's domains with it).
    public var host: String
    public var sender: String
    public var eventID: String
    public var sentAt: Int64
    public var title: String?

    public init(viewer: String, container: String, environment: Environment, url: String, conversationID: String, host: String,
                sender: String, eventID: String, sentAt: Int64, title: String?) {
        self.viewer = viewer
        self.container = container
        self.environment = environment
        self.url = url
        self.conversationID = conversationID
        self.host = host
        self.sender = sender
        self.eventID = eventID
        self.sentAt = sentAt
        self.title = title
    }
}

/// A person in a user's contacts: a handle (email, phone or user record name) and the account it
/// names, when known.
public struct StoredContact: Sendable, Hashable {
    public var handle: String
    public var userRecordName: String?

    public init(handle: String, userRecordName: String?) {
        self.handle = handle
        self.userRecordName = userRecordName
    }
}

/// Reads of conversations, their timelines and the per-viewer link table.
public protocol ConversationReading {
    func conversation(id: String) throws -> StoredConversation?
    /// The conversations `user` is a member of in one container environment, newest first.
    func conversations(user: String, container: String, environment: Environment) throws -> [StoredConversation]
    func isMember(conversation: String, user: String) throws -> Bool
    /// Timeline entries after `seq` that `viewer` was a member for (from their latest joining on:
    /// nothing from before they were added, or from before they were added again), oldest first,
    /// at most `limit`.
    func conversationEvents(conversation: String, viewer: String, after seq: Int64, limit: Int) throws -> [StoredConversationEvent]
    /// The viewer's link rows whose host is one of `hosts` or ends with one of `suffixes`
    /// (`.example.com`); nil for both reads every row.
    func sharedLinks(viewer: String, container: String, environment: Environment, hosts: [String]?, suffixes: [String]?) throws -> [StoredSharedLink]
    /// The viewer's rows whose URL is a Tandem share's collaboration in this container.
    func sharedShareLinks(viewer: String, container: String, environment: Environment) throws -> [StoredSharedLink]
    /// The viewer's rows for one URL.
    func sharedLinks(viewer: String, container: String, environment: Environment, url: String) throws -> [StoredSharedLink]
    /// Every (conversation, member, isGroup) of the conversations `viewer` is in.
    func coMembers(viewer: String, container: String, environment: Environment) throws -> [(conversation: String, isGroup: Bool, member: String)]
    /// Conversations whose timeline shared `url`.
    func conversationsSharing(url: String) throws -> [String]
    /// URLs shared in a conversation.
    func links(conversation: String) throws -> [String]
    /// Everyone who ever sent `url` into the conversation, sorted (decisions W15).
    func linkSenders(conversation: String, url: String) throws -> [String]
    func contacts(owner: String) throws -> [StoredContact]
    /// (conversation, url) pairs the viewer pinned.
    func pins(viewer: String) throws -> [(conversation: String, url: String)]
}

/// Writes of conversations, inside a transaction.
public protocol ConversationWriting: ConversationReading {
    /// Inserts the conversation and its members.
    func insertConversation(_ conversation: StoredConversation) throws
    func addMember(conversation: String, user: String, at time: Int64) throws
    /// Removes the member with their link rows and pins of that conversation.
    func removeMember(conversation: String, user: String) throws
    /// Appends to the timeline; returns the event's sequence.
    func appendEvent(_ event: StoredConversationEvent) throws -> Int64
    /// Inserts or replaces (viewer, url, conversation) when `link` is at least as new.
    func putSharedLink(_ link: StoredSharedLink) throws
    /// Records that `sender` sent `url` into the conversation in the message at `seq`: the
    /// conversation's latest sequence for the URL, and the sender among its senders (W15).
    func putConversationLink(conversation: String, url: String, seq: Int64, sender: String) throws
    func setPin(viewer: String, conversation: String, url: String, pinned: Bool, at time: Int64) throws
    func putContact(owner: String, _ contact: StoredContact) throws
    /// True when a contact was removed.
    func removeContact(owner: String, handle: String) throws -> Bool
}
