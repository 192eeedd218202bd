import Foundation
public import TandemStore

/// A member added to or removed from a conversation, told to observers after the commit.
///
/// Other services subscribe with `ConversationService.addMembershipObserver(_:)` (group
/// sessions end a departed member's participation this way).
public struct MembershipChange: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        case added, removed
    }

    public var kind: Kind
    public var conversationID: String
    public var container: String
    public var environment: Environment
    /// The member added or removed (user record name).
    public var member: String
    /// Who made the change (the member themself when leaving).
    public var actor: String

    public init(kind: Kind, conversationID: String, container: String, environment: Environment, member: String, actor: String) {
        self.kind = kind
        self.conversationID = conversationID
        self.container = container
        self.environment = environment
        self.member = member
        self.actor = actor
    }
}
