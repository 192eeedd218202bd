public import Foundation
internal import TandemCore

/// A conversation (the Messages role of Shared with You): 1:1 or group, with its members'
/// user record names. Server: `/tandem/1/{container}/{environment}/conversations/…`.
public struct Conversation: Sendable, Hashable, Identifiable {
    public var id: String
    public var isGroup: Bool
    public var title: String?
    /// User record names of the current members.
    public var members: [String]
    public var createdBy: String
    public var creationDate: Date

    public init(id: String, isGroup: Bool, title: String? = nil, members: [String], createdBy: String, creationDate: Date) {
        self.id = id
        self.isGroup = isGroup
        self.title = title
        self.members = members
        self.createdBy = createdBy
        self.creationDate = creationDate
    }

    init(json: JSONValue) {
        self.init(id: json["conversationID"]?.stringValue ?? "", isGroup: json["isGroup"]?.boolValue ?? false,
                  title: json["title"]?.stringValue, members: json["members"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                  createdBy: json["createdBy"]?.stringValue ?? "", creationDate: Date(milliseconds: json["createdAt"]?.int64Value ?? 0))
    }
}

/// A link in a message: found in its text, or attached with a title and image (a rich link).
public struct LinkAttachment: Sendable, Hashable {
    public var url: URL
    public var title: String?
    public var imageURL: URL?

    public init(url: URL, title: String? = nil, imageURL: URL? = nil) {
        self.url = url
        self.title = title
        self.imageURL = imageURL
    }

    var json: JSONValue {
        var object: JSONObject = ["url": .string(url.absoluteString)]
        if let title { object["title"] = .string(title) }
        if let imageURL { object["imageURL"] = .string(imageURL.absoluteString) }
        return .object(object)
    }
}

/// A collaboration notice as a conversation shows it: what happened, to which collaboration,
/// and who did it (the event's `actor`).
public struct Notice: Sendable, Hashable {
    /// `change`, `mention`, `persistence` or `membership`.
    public var event: String
    /// The trigger's header raw value (nil for a mention).
    public var trigger: Int?
    /// `edit`, `renamed`, `addedCollaborator`, …
    public var triggerName: String?
    public var collaborationIdentifier: String
    public var url: URL?
    public var title: String?
    /// The mentioned person's user record name (a mention is shown to them only).
    public var mentioned: String?

    public init(event: String, trigger: Int?, triggerName: String?, collaborationIdentifier: String, url: URL?, title: String?, mentioned: String?) {
        self.event = event
        self.trigger = trigger
        self.triggerName = triggerName
        self.collaborationIdentifier = collaborationIdentifier
        self.url = url
        self.title = title
        self.mentioned = mentioned
    }
}

/// One entry of a conversation's timeline.
public struct ConversationEvent: Sendable, Hashable, Identifiable {
    public enum Kind: String, Sendable {
        case message, memberAdded, memberRemoved, notice
    }

    public var id: String
    public var conversationID: String
    /// Position in the timeline; pass the last one seen to `Conversations.messages(in:after:)`.
    public var sequence: Int64
    public var kind: Kind
    /// The sender, the member who added or removed someone, or the notice's actor.
    public var actor: String
    /// The actor's name and picture (decisions R32), given with notices
    /// (`HighlightCenter.notices(for:)`, `postNotice(for:)`) when you share a conversation or a
    /// share with them; nil otherwise.
    public var actorIdentity: UserIdentity?
    /// The member added or removed.
    public var member: String?
    public var text: String?
    public var links: [LinkAttachment]
    /// A collaboration the sender's app started for this message.
    public var collaborationIdentifier: String?
    public var notice: Notice?
    public var date: Date

    public init(id: String, conversationID: String, sequence: Int64, kind: Kind, actor: String, member: String? = nil, text: String? = nil,
                links: [LinkAttachment] = [], collaborationIdentifier: String? = nil, notice: Notice? = nil, date: Date) {
        self.id = id
        self.conversationID = conversationID
        self.sequence = sequence
        self.kind = kind
        self.actor = actor
        self.member = member
        self.text = text
        self.links = links
        self.collaborationIdentifier = collaborationIdentifier
        self.notice = notice
        self.date = date
    }

    /// An event with its actor's identity from the answer's `people` object (R32).
    init(json: JSONValue, people: JSONValue?) {
        self.init(json: json)
        actorIdentity = UserIdentity(person: actor, in: people)
    }

    init(json: JSONValue) {
        let links = (json["links"]?.arrayValue ?? []).compactMap { link -> LinkAttachment? in
            guard let url = link["url"]?.stringValue.flatMap(URL.init(string:)) else { return nil }
            return LinkAttachment(url: url, title: link["title"]?.stringValue, imageURL: link["imageURL"]?.stringValue.flatMap(URL.init(string:)))
        }
        var notice: Notice?
        if let body = json["notice"] {
            notice = Notice(event: body["event"]?.stringValue ?? "", trigger: body["trigger"]?.int64Value.map(Int.init),
                            triggerName: body["triggerName"]?.stringValue, collaborationIdentifier: body["collaborationIdentifier"]?.stringValue ?? "",
                            url: body["url"]?.stringValue.flatMap(URL.init(string:)), title: body["title"]?.stringValue,
                            mentioned: body["mentioned"]?.stringValue)
        }
        self.init(id: json["eventID"]?.stringValue ?? "", conversationID: json["conversationID"]?.stringValue ?? "",
                  sequence: json["seq"]?.int64Value ?? 0, kind: Kind(rawValue: json["kind"]?.stringValue ?? "") ?? .message,
                  actor: json["actor"]?.stringValue ?? "", member: json["member"]?.stringValue, text: json["text"]?.stringValue, links: links,
                  collaborationIdentifier: json["collaborationIdentifier"]?.stringValue, notice: notice,
                  date: Date(milliseconds: json["createdAt"]?.int64Value ?? 0))
    }
}

/// "Add Lauren to your 3 shared documents": membership sync asks a collaboration's owner when
/// a conversation where it was shared gains or loses a member (spec §1.7 step 7).
public struct MembershipPrompt: Sendable, Hashable, Identifiable {
    public enum Change: String, Sendable { case add, remove }
    public enum State: String, Sendable { case pending, accepted, declined }

    public var id: String
    public var conversationID: String
    /// The user record name of the person who joined or left.
    public var person: String
    public var change: Change
    public var state: State
    /// The banner text.
    public var message: String
    public var collaborationIdentifiers: [String]

    public init(id: String, conversationID: String, person: String, change: Change, state: State, message: String, collaborationIdentifiers: [String]) {
        self.id = id
        self.conversationID = conversationID
        self.person = person
        self.change = change
        self.state = state
        self.message = message
        self.collaborationIdentifiers = collaborationIdentifiers
    }

    init(json: JSONValue) {
        self.init(id: json["promptID"]?.stringValue ?? "", conversationID: json["conversationID"]?.stringValue ?? "",
                  person: json["person"]?.stringValue ?? "", change: Change(rawValue: json["change"]?.stringValue ?? "") ?? .add,
                  state: State(rawValue: json["state"]?.stringValue ?? "") ?? .pending, message: json["message"]?.stringValue ?? "",
                  collaborationIdentifiers: (json["collaborations"]?.arrayValue ?? []).compactMap { $0["collaborationIdentifier"]?.stringValue })
    }
}

/// A person in the signed-in user's contacts (D22 reads them).
public struct Contact: Sendable, Hashable {
    /// A user record name, email or phone number.
    public var handle: String
    /// The account the handle names, when one exists.
    public var userRecordName: String?

    public init(handle: String, userRecordName: String? = nil) {
        self.handle = handle
        self.userRecordName = userRecordName
    }
}

/// A Shared with You switch (absent switches are on).
public enum ConsentScope: Sendable, Hashable {
    case global
    case app(String)
    case conversation(String)
}
