public import Foundation
internal import TandemCore

/// Who shared a highlight, where and when: what an attribution view renders
/// (SharedWithYou `SWAttributionView`). One per conversation that shared the link (D21).
public struct Attribution: Sendable, Hashable {
    /// The sender's user record name.
    public var sender: String
    public var conversationID: String
    public var isGroup: Bool
    /// The message that shared the link (the latest one in that conversation).
    public var messageID: String
    public var date: Date
    public var isPinned: Bool
    /// The link's title when it was attached as a rich link.
    public var title: String?
    /// The sender's name and picture (`nameComponents`, `avatarURL`; decisions R32), for
    /// "Shared by Ada" with her face. Nil where the server gave none: for a sender who no longer
    /// shares a conversation or a share with you, and in `HighlightCenter.highlight(for:)`.
    public var senderIdentity: UserIdentity?

    public init(sender: String, conversationID: String, isGroup: Bool, messageID: String, date: Date, isPinned: Bool, title: String? = nil,
                senderIdentity: UserIdentity? = nil) {
        self.sender = sender
        self.senderIdentity = senderIdentity
        self.conversationID = conversationID
        self.isGroup = isGroup
        self.messageID = messageID
        self.date = date
        self.isPinned = isPinned
        self.title = title
    }
}

/// A collaboration shared in conversations (SharedWithYou `SWCollaborationHighlight`): a Tandem
/// share URL or a collaboration an app started.
public struct CollaborationHighlight: Sendable, Hashable {
    /// The highlight's identifier.
    public var identifier: String
    public var url: URL
    /// `share:{shortGUID}` for a Tandem share (decisions W4); the app's identifier otherwise.
    public var collaborationIdentifier: String
    public var title: String?
    public var creationDate: Date
    /// A uniform type identifier (`com.apple.cloudkit.share` for a share without `cloudkit.type`).
    public var contentType: String
    /// The owner's user record name (a Tandem addition).
    public var owner: String
    public var attributions: [Attribution]

    public init(identifier: String, url: URL, collaborationIdentifier: String, title: String?, creationDate: Date, contentType: String,
                owner: String, attributions: [Attribution] = []) {
        self.identifier = identifier
        self.url = url
        self.collaborationIdentifier = collaborationIdentifier
        self.title = title
        self.creationDate = creationDate
        self.contentType = contentType
        self.owner = owner
        self.attributions = attributions
    }
}

/// A link shared with the user that belongs to the app (SharedWithYou `SWHighlight`).
public struct Highlight: Sendable, Hashable, Identifiable {
    /// Opaque and stable for the URL.
    public var id: String
    public var url: URL
    /// The newest attribution's date.
    public var date: Date
    public var isPinned: Bool
    /// Put first by interaction (D20).
    public var isSuggested: Bool
    /// Newest first, one per conversation.
    public var attributions: [Attribution]
    /// Set when the link is a collaboration.
    public var collaboration: CollaborationHighlight?

    public init(id: String, url: URL, date: Date, isPinned: Bool = false, isSuggested: Bool = false, attributions: [Attribution],
                collaboration: CollaborationHighlight? = nil) {
        self.id = id
        self.url = url
        self.date = date
        self.isPinned = isPinned
        self.isSuggested = isSuggested
        self.attributions = attributions
        self.collaboration = collaboration
    }

    /// - Parameter people: the answer's `people` object (R32), whose identities go to the senders.
    init?(json: JSONValue, people: JSONValue? = nil) {
        guard let id = json["identifier"]?.stringValue, let url = json["url"]?.stringValue.flatMap(URL.init(string:)) else { return nil }
        let attributions = (json["attributions"]?.arrayValue ?? []).map { item in
            let sender = item["sender"]?.stringValue ?? ""
            return Attribution(sender: sender, conversationID: item["conversationID"]?.stringValue ?? "",
                               isGroup: item["isGroup"]?.boolValue ?? false, messageID: item["eventID"]?.stringValue ?? "",
                               date: Date(milliseconds: item["date"]?.int64Value ?? 0), isPinned: item["pinned"]?.boolValue ?? false,
                               title: item["title"]?.stringValue, senderIdentity: UserIdentity(person: sender, in: people))
        }
        var collaboration: CollaborationHighlight?
        if let c = json["collaboration"] {
            collaboration = CollaborationHighlight(identifier: id, url: url, collaborationIdentifier: c["collaborationIdentifier"]?.stringValue ?? "",
                                                   title: c["title"]?.stringValue, creationDate: Date(milliseconds: c["creationDate"]?.int64Value ?? 0),
                                                   contentType: c["contentType"]?.stringValue ?? "", owner: c["owner"]?.stringValue ?? "",
                                                   attributions: attributions)
        }
        self.init(id: id, url: url, date: Date(milliseconds: json["date"]?.int64Value ?? 0), isPinned: json["pinned"]?.boolValue ?? false,
                  isSuggested: json["suggested"]?.boolValue ?? false, attributions: attributions, collaboration: collaboration)
    }
}

/// Whether the user lets the app see highlights. A Tandem addition: Apple's list is empty both
/// when there is nothing and when the app is not allowed (spec pain point P2).
public enum HighlightAuthorizationState: String, Sendable, Hashable {
    /// Allowed (the list may still be empty: nothing shared).
    case allowed
    /// Shared with You is off for every app.
    case deniedGlobally
    /// Shared with You is off for this app.
    case deniedForApp
    /// Not known yet (before the first fetch or snapshot).
    case unknown
}

/// How a highlight was shown, feeding the suggested slot (SharedWithYou
/// `SWAttributionView.DisplayContext`; D20 weighs `detail` more than `summary`).
public enum HighlightDisplayContext: String, Sendable {
    case summary, detail
}
