public import Foundation
internal import TandemCore

/// The signed-in user's conversations (the Messages role of Shared with You), over
/// `/tandem/1/{container}/{environment}/conversations/…`.
///
/// ```swift
/// let chat = try await container.conversations.create(with: [bob.recordName, "cat@example.com"], title: "Trip")
/// try await container.conversations.send("look https://example.com/items/1", in: chat.id)
/// for try await event in container.conversations.events { … }
/// ```
///
/// Errors are `TandemError`: `.unknownItem` for a conversation the caller is not in (or that
/// does not exist), `.invalidArguments` for malformed input, `.limitExceeded` past a limit
/// (100 members, 20 links per message, 64 KiB of text).
public struct Conversations: Sendable {
    let transport: Transport

    /// One page of a conversation's timeline.
    public struct Page: Sendable {
        public var events: [ConversationEvent]
        /// Pass to `messages(in:after:)` for the next page.
        public var continuationMarker: Int64
        public var moreComing: Bool
    }

    /// Starts a conversation with `members` (user record names, emails or phone numbers).
    /// One member and `group` nil makes a 1:1 conversation; otherwise a group.
    public func create(with members: [String], title: String? = nil, group: Bool? = nil) async throws(TandemError) -> Conversation {
        var body: JSONObject = ["members": .array(members.map { .string($0) })]
        if let title { body["title"] = .string(title) }
        if let group { body["group"] = .bool(group) }
        return Conversation(json: try await transport.json(transport.tandemURL("conversations/create"), body: .object(body)))
    }

    /// The signed-in user's conversations, newest first.
    public func list() async throws(TandemError) -> [Conversation] {
        let json = try await transport.json(transport.tandemURL("conversations/list"), body: nil)
        return (json["conversations"]?.arrayValue ?? []).map(Conversation.init(json:))
    }

    public func conversation(_ id: String) async throws(TandemError) -> Conversation {
        Conversation(json: try await transport.json(query("conversations/lookup", ["conversation": id]), body: nil))
    }

    /// Adds a member to a group conversation (a `memberAdded` event; membership sync prompts
    /// the owners of collaborations shared there).
    @discardableResult
    public func addMember(_ handle: String, to conversation: String) async throws(TandemError) -> ConversationEvent {
        ConversationEvent(json: try await transport.json(transport.tandemURL("conversations/members/add"),
                                                         body: ["conversation": .string(conversation), "member": .string(handle)]))
    }

    /// Removes a member from a group conversation; removing yourself leaves it.
    @discardableResult
    public func removeMember(_ handle: String, from conversation: String) async throws(TandemError) -> ConversationEvent {
        ConversationEvent(json: try await transport.json(transport.tandemURL("conversations/members/remove"),
                                                         body: ["conversation": .string(conversation), "member": .string(handle)]))
    }

    /// Sends a message. Links in `text` are found by the server; `links` attaches more with a
    /// title and image. At most 20 links. `mode` says what a share URL in it does: `.sendCopy`
    /// (the default) only shows it, `.collaborate` also invites the members (`ShareMode`).
    @discardableResult
    public func send(_ text: String, links: [LinkAttachment] = [], in conversation: String,
                     mode: ShareMode = .sendCopy) async throws(TandemError) -> ConversationEvent {
        var body: JSONObject = ["conversation": .string(conversation), "text": .string(text), "links": .array(links.map(\.json))]
        for (key, value) in mode.fields.entries { body[key] = value }
        return try await send(body)
    }

    /// Sends `item`'s share into a conversation, making the share first if it does not exist
    /// yet (`ShareTransferRepresentation.share()`, decisions R13): the share sheet's Send with
    /// a prepared item. The share's URL goes as a link titled with the share's title; `mode`
    /// defaults to `.collaborate()` (Messages' default for a collaboration). Throws what
    /// `share()` throws (nothing is sent then) and what `send(_:links:in:mode:)` throws (the
    /// share stays: sending again reuses it).
    @discardableResult
    public func send(_ text: String, sharing item: ShareTransferRepresentation, in conversation: String,
                     mode: ShareMode = .collaborate()) async throws -> ConversationEvent {
        let share = try await item.share()
        guard let url = share.url else { throw TandemError(.internalError, "the server returned the share without its URL") }
        return try await send(text, links: [LinkAttachment(url: url, title: share.title)], in: conversation, mode: mode)
    }

    func send(_ body: JSONObject) async throws(TandemError) -> ConversationEvent {
        ConversationEvent(json: try await transport.json(transport.tandemURL("conversations/messages/send"), body: .object(body)))
    }

    /// The timeline after `marker` (0: from the start), oldest first, `limit` (1…200) per page.
    public func messages(in conversation: String, after marker: Int64 = 0, limit: Int = 50) async throws(TandemError) -> Page {
        let json = try await transport.json(query("conversations/messages/list", ["conversation": conversation, "continuationMarker": String(marker),
                                                                                    "resultsLimit": String(limit)]), body: nil)
        return Page(events: (json["events"]?.arrayValue ?? []).map(ConversationEvent.init(json:)),
                    continuationMarker: json["continuationMarker"]?.stringValue.flatMap { Int64($0) } ?? marker,
                    moreComing: json["moreComing"]?.boolValue ?? false)
    }

    /// Pins (or unpins) a link shared in the conversation, for you only: a pinned link is a
    /// highlight whatever the contacts and the conversation's consent say.
    public func pin(_ url: URL, in conversation: String, pinned: Bool = true) async throws(TandemError) {
        _ = try await transport.json(transport.tandemURL("conversations/pins/modify"),
                                     body: ["conversation": .string(conversation), "url": .string(url.absoluteString), "pinned": .bool(pinned)])
    }

    public func contacts() async throws(TandemError) -> [Contact] {
        Self.contacts(try await transport.json(transport.tandemURL("conversations/contacts/list"), body: nil))
    }

    /// Adds and removes contacts (handles: user record names, emails, phone numbers); returns them all.
    @discardableResult
    public func modifyContacts(add: [String] = [], remove: [String] = []) async throws(TandemError) -> [Contact] {
        Self.contacts(try await transport.json(transport.tandemURL("conversations/contacts/modify"),
                                               body: ["add": .array(add.map { .string($0) }), "remove": .array(remove.map { .string($0) })]))
    }

    private static func contacts(_ json: JSONValue) -> [Contact] {
        (json["contacts"]?.arrayValue ?? []).map { Contact(handle: $0["handle"]?.stringValue ?? "", userRecordName: $0["userRecordName"]?.stringValue) }
    }

    /// Turns Shared with You on or off globally, for an app, or for a conversation.
    public func setConsent(_ allowed: Bool, for scope: ConsentScope) async throws(TandemError) {
        var body: JSONObject = ["allowed": .bool(allowed)]
        switch scope {
        case .global: body["scope"] = "global"
        case .app(let app): body["scope"] = "app"; body["target"] = .string(app)
        case .conversation(let id): body["scope"] = "conversation"; body["target"] = .string(id)
        }
        _ = try await transport.json(transport.tandemURL("conversations/consent/modify"), body: .object(body))
    }

    /// Membership prompts waiting for the signed-in user (as a collaboration owner).
    public func membershipPrompts() async throws(TandemError) -> [MembershipPrompt] {
        let json = try await transport.json(transport.tandemURL("collaborations/prompts/list"), body: nil)
        return (json["prompts"]?.arrayValue ?? []).map(MembershipPrompt.init(json:))
    }

    /// New timeline events of every conversation you are in, live from the stream WebSocket
    /// (messages, membership events, notices). Not replayed after a reconnect: page with
    /// `messages(in:after:)` from the last sequence you saw.
    public var events: AsyncThrowingStream<ConversationEvent, any Error> {
        StreamEnvelopes(transport: transport, types: ["conversation.event"]).stream { $0["event"].map(ConversationEvent.init(json:)) }
    }

    /// Membership prompts as they arrive on the stream.
    public var membershipPromptUpdates: AsyncThrowingStream<MembershipPrompt, any Error> {
        StreamEnvelopes(transport: transport, types: ["collaboration.prompt"]).stream { $0["prompt"].map(MembershipPrompt.init(json:)) }
    }

    /// Characters a query name or value keeps as they are: `+`, `&`, `=` and `#` are escaped
    /// too (the server reads `+` as a space, and a URL value may hold the others).
    static let queryValueAllowed: CharacterSet = {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "+&=#")
        return allowed
    }()

    static func queryEscaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: queryValueAllowed) ?? text }

    func query(_ operation: String, _ items: [String: String]) -> URL {
        var components = URLComponents(url: transport.tandemURL(operation), resolvingAgainstBaseURL: false)!
        components.percentEncodedQueryItems = (components.percentEncodedQueryItems ?? [])
            + items.sorted { $0.key < $1.key }.map { URLQueryItem(name: Self.queryEscaped($0.key), value: Self.queryEscaped($0.value)) }
        return components.url!
    }
}

extension Container {
    /// The signed-in user's conversations, contacts, pins and consent (Shared with You).
    public var conversations: Conversations { Conversations(transport: transport) }
}
