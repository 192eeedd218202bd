/// A collaboration shared in conversations: a Tandem share reached by its URL, or one an app
/// started (custom infrastructure).
public struct StoredCollaboration: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case share, custom
    }

    /// The `collaborationIdentifier` (for a Tandem share: `share:{shortGUID}`).
    public var id: String
    public var container: String
    public var environment: Environment
    public var url: String
    public var owner: String
    public var kind: Kind
    public var title: String?
    /// A uniform type identifier.
    public var contentType: String
    public var createdAt: Int64
    public var shareGUID: String?

    public init(id: String, container: String, environment: Environment, url: String, owner: String, kind: Kind, title: String?,
                contentType: String, createdAt: Int64, shareGUID: String? = nil) {
        self.id = id
        self.container = container
        self.environment = environment
        self.url = url
        self.owner = owner
        self.kind = kind
        self.title = title
        self.contentType = contentType
        self.createdAt = createdAt
        self.shareGUID = shareGUID
    }
}

/// "Add Lauren to your 3 shared documents": one prompt to a collaboration owner when a
/// conversation gains or loses a member.
public struct StoredMembershipPrompt: Sendable, Hashable {
    public enum Change: String, Sendable { case add, remove }
    public enum State: String, Sendable { case pending, accepted, declined }

    public var id: String
    public var container: String
    public var environment: Environment
    public var owner: String
    public var conversationID: String
    public var person: String
    public var change: Change
    /// Collaboration identifiers.
    public var collaborations: [String]
    public var state: State
    public var createdAt: Int64

    public init(id: String, container: String, environment: Environment, owner: String, conversationID: String, person: String,
                change: Change, collaborations: [String], state: State, createdAt: Int64) {
        self.id = id
        self.container = container
        self.environment = environment
        self.owner = owner
        self.conversationID = conversationID
        self.person = person
        self.change = change
        self.collaborations = collaborations
        self.state = state
        self.createdAt = createdAt
    }
}

/// Reads of collaborations, notices and membership prompts.
public protocol CollaborationReading {
    /// The collaboration `id` of a container environment (identifiers are the app's, unique there).
    func collaboration(id: String, container: String, environment: Environment) throws -> StoredCollaboration?
    func collaboration(url: String, container: String, environment: Environment) throws -> StoredCollaboration?
    func collaborations(urls: [String], container: String, environment: Environment) throws -> [String: StoredCollaboration]
    /// The collaborations whose URL was shared in a conversation.
    func collaborationsShared(conversation: String) throws -> [StoredCollaboration]
    /// Notices of a collaboration after the viewer's clear mark, in conversations the viewer is in.
    func notices(viewer: String, collaboration: String, container: String, environment: Environment) throws -> [StoredConversationEvent]
    func prompts(owner: String, container: String, environment: Environment, state: StoredMembershipPrompt.State?) throws -> [StoredMembershipPrompt]
    func prompt(id: String) throws -> StoredMembershipPrompt?
}

/// Writes of collaborations, inside a transaction.
public protocol CollaborationWriting: CollaborationReading {
    /// Inserts a collaboration; an existing one (same id or URL) is left as it is.
    func putCollaboration(_ collaboration: StoredCollaboration) throws
    /// Sets a collaboration's title and content type (a Tandem share's `cloudkit.title` or
    /// `cloudkit.type` changed: decisions R4); no collaboration with that id changes nothing.
    func setCollaborationMetadata(id: String, container: String, environment: Environment, title: String?, contentType: String) throws
    func clearNotices(viewer: String, collaboration: String, container: String, environment: Environment, through seq: Int64) throws
    func putPrompt(_ prompt: StoredMembershipPrompt) throws
}
