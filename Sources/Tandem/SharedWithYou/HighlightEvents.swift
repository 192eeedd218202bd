public import Foundation
internal import TandemCore

/// An event posted for a collaboration highlight, shown as a notice in the conversations
/// where its link was shared (SharedWithYou `SWHighlightEvent`). Post with
/// `HighlightCenter.postNotice(for:)`.
public protocol HighlightEvent: Sendable {
    /// The highlight's URL.
    var highlightURL: URL { get }
    /// The collaboration's identifier.
    var collaborationIdentifier: String { get }
}

/// Content changed (SharedWithYou `SWHighlightChangeEvent`).
public struct HighlightChangeEvent: HighlightEvent, Hashable {
    /// `SWHighlightChangeEventTrigger`, header raw values.
    public enum Trigger: Int, Sendable {
        case edit = 1
        case comment = 2
    }

    public var highlightURL: URL
    public var collaborationIdentifier: String
    public var changeEventTrigger: Trigger

    public init(highlight: CollaborationHighlight, trigger: Trigger) {
        highlightURL = highlight.url
        collaborationIdentifier = highlight.collaborationIdentifier
        changeEventTrigger = trigger
    }
}

/// Someone was mentioned; only they see it (SharedWithYou `SWHighlightMentionEvent`).
public struct HighlightMentionEvent: HighlightEvent, Hashable {
    public var highlightURL: URL
    public var collaborationIdentifier: String
    /// The identity's root hash (base64) or the share participant handle.
    public var mentionedPersonHandle: String
    let isIdentity: Bool

    /// Custom infrastructure: the mentioned person's identity in this collaboration.
    public init(highlight: CollaborationHighlight, mentionedPersonIdentity: Person.Identity) {
        highlightURL = highlight.url
        collaborationIdentifier = highlight.collaborationIdentifier
        mentionedPersonHandle = mentionedPersonIdentity.rootHash.base64EncodedString()
        isIdentity = true
    }

    /// A Tandem share: the participant's handle (email, phone or user record name).
    public init(highlight: CollaborationHighlight, mentionedPersonCloudKitShareHandle handle: String) {
        highlightURL = highlight.url
        collaborationIdentifier = highlight.collaborationIdentifier
        mentionedPersonHandle = handle
        isIdentity = false
    }
}

/// The content was created, deleted, renamed or moved (SharedWithYou `SWHighlightPersistenceEvent`).
public struct HighlightPersistenceEvent: HighlightEvent, Hashable {
    /// `SWHighlightPersistenceEventTrigger`, header raw values.
    public enum Trigger: Int, Sendable {
        case created = 1
        case deleted = 2
        case renamed = 3
        case moved = 4
    }

    public var highlightURL: URL
    public var collaborationIdentifier: String
    public var persistenceEventTrigger: Trigger

    public init(highlight: CollaborationHighlight, trigger: Trigger) {
        highlightURL = highlight.url
        collaborationIdentifier = highlight.collaborationIdentifier
        persistenceEventTrigger = trigger
    }
}

/// Someone was added or removed (SharedWithYou `SWHighlightMembershipEvent`; the header
/// spelling `addedCollaborator`, not the article's `addCollaborator`).
public struct HighlightMembershipEvent: HighlightEvent, Hashable {
    /// `SWHighlightMembershipEventTrigger`, header raw values.
    public enum Trigger: Int, Sendable {
        case addedCollaborator = 1
        case removedCollaborator = 2
    }

    public var highlightURL: URL
    public var collaborationIdentifier: String
    public var membershipEventTrigger: Trigger

    public init(highlight: CollaborationHighlight, trigger: Trigger) {
        highlightURL = highlight.url
        collaborationIdentifier = highlight.collaborationIdentifier
        membershipEventTrigger = trigger
    }
}

extension HighlightEvent {
    /// The `highlights/notices/post` body.
    var noticeBody: JSONObject {
        var body: JSONObject = ["collaborationIdentifier": .string(collaborationIdentifier)]
        switch self {
        case let event as HighlightChangeEvent:
            body["event"] = "change"; body["trigger"] = .int(Int64(event.changeEventTrigger.rawValue))
        case let event as HighlightPersistenceEvent:
            body["event"] = "persistence"; body["trigger"] = .int(Int64(event.persistenceEventTrigger.rawValue))
        case let event as HighlightMembershipEvent:
            body["event"] = "membership"; body["trigger"] = .int(Int64(event.membershipEventTrigger.rawValue))
        case let event as HighlightMentionEvent:
            body["event"] = "mention"
            body[event.isIdentity ? "mentionedIdentity" : "mentionedHandle"] = .string(event.mentionedPersonHandle)
        default:
            body["event"] = "unknown"
        }
        return body
    }
}
