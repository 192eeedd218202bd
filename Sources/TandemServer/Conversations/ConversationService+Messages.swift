import Foundation
public import TandemCore
public import TandemStore

extension ConversationService {
    /// A link attached to a message explicitly (a rich link: title and image).
    public struct LinkAttachment: Sendable, Hashable {
        public var url: String
        public var title: String?
        public var imageURL: String?

        public init(url: String, title: String? = nil, imageURL: String? = nil) {
            self.url = url
            self.title = title
            self.imageURL = imageURL
        }
    }

    /// A collaboration an app started for this message (custom infrastructure: the start
    /// action's URL and identifier, SharedWithYou `SWStartCollaborationAction.fulfill`).
    public struct StartedCollaboration: Sendable, Hashable {
        public var identifier: String
        public var url: String
        public var title: String?
        public var contentType: String

        public init(identifier: String, url: String, title: String?, contentType: String) {
            self.identifier = identifier
            self.url = url
            self.title = title
            self.contentType = contentType
        }
    }

    /// Characters of a message's text.
    public static let textLimit = 65_536

    /// Sends a message: its text, links found in the text and attached links (at most 20 in
    /// all, deduplicated), and optionally a collaboration the sender's app started. Every
    /// member's link table gets the links (the latest message per conversation counts, D21); a
    /// Tandem share URL becomes a collaboration highlight. With `.collaborate`, the members
    /// present now also become invited participants of the shares the message links, in the
    /// same transaction (`CollaborateInvitations`, decisions R1–R3).
    /// - Throws: `NOT_FOUND` for an unknown conversation or a sender who is not a member;
    ///   `BAD_REQUEST` for an empty message, a malformed attached URL, a text over 64 KiB, a
    ///   collaboration whose URL is malformed, or whose identifier another user owns;
    ///   `LIMIT_EXCEEDED` past 20 links; with `.collaborate`, `BAD_REQUEST` for a message without
    ///   a share URL, `ACCESS_DENIED` when the sender may not invite people to a share it names,
    ///   `TOO_MANY_PARTICIPANTS` for a full share (nothing is sent then).
    public func send(conversation id: String, sender: String, text: String, attachments: [LinkAttachment],
                     collaboration: StartedCollaboration?, mode: ShareMode = .sendCopy, in place: Place) throws -> StoredConversationEvent {
        guard text.utf8.count <= Self.textLimit else { throw CloudKitError.badRequest("a message's text has at most 65536 bytes") }
        var links: [MessageLinks.Link] = []
        func add(_ url: String, title: String?, image: String?, explicit: Bool) throws {
            guard let (normalized, host) = MessageLinks.normalize(url) else {
                if explicit { throw CloudKitError.badRequest("'\(url.prefix(200))' is not an http(s) URL with a host") }
                return
            }
            if let title, title.count > MessageLinks.titleLimit { throw CloudKitError.badRequest("a link title has at most 1024 characters") }
            if let image, MessageLinks.normalize(image) == nil { throw CloudKitError.badRequest("imageURL '\(image.prefix(200))' is not an http(s) URL") }
            if let index = links.firstIndex(where: { $0.url == normalized }) {
                if explicit { links[index].title = title ?? links[index].title; links[index].imageURL = image ?? links[index].imageURL }
                return
            }
            links.append(MessageLinks.Link(url: normalized, host: host, title: title, imageURL: image))
        }
        for url in MessageLinks.extract(text) { try add(url, title: nil, image: nil, explicit: false) }
        for attachment in attachments { try add(attachment.url, title: attachment.title, image: attachment.imageURL, explicit: true) }
        var started = collaboration
        if let collaboration {
            guard !collaboration.identifier.isEmpty, collaboration.identifier.count <= 256 else {
                throw CloudKitError.badRequest("collaborationIdentifier must be 1 to 256 characters")
            }
            try add(collaboration.url, title: collaboration.title, image: nil, explicit: true)
            started?.url = MessageLinks.normalize(collaboration.url)!.url
        }
        guard links.count <= MessageLinks.limit else {
            throw CloudKitError(.limitExceeded, "a message carries at most \(MessageLinks.limit) links; this one has \(links.count)")
        }
        guard !text.isEmpty || !links.isEmpty else { throw CloudKitError.badRequest("a message needs text or a link") }
        let now = Clock.milliseconds()
        let hub = self.hub, changeHub = self.changeHub, limit = participantLimit, publicURL = self.publicURL
        let pickedLinks = links
        let startedCollaboration = started
        return try store.write({ tx -> (StoredConversationEvent, ConversationHub.Effects, [ChangeEvent]) in
            let conversation = try Self.requireMember(tx, conversation: id, user: sender, in: place)
            var invited: (changes: [ShareMembershipNotices.Change], events: [ChangeEvent]) = ([], [])
            if case .collaborate(let permission) = mode {
                invited = try CollaborateInvitations.invite(tx, urls: pickedLinks.map(\.url), members: conversation.members, sender: sender,
                                                            permission: permission, container: conversation.container,
                                                            environment: conversation.environment, limit: limit, at: now)
            }
            var body: JSONObject = ["text": .string(text)]
            body["links"] = .array(pickedLinks.map(ConversationCodec.link))
            if let startedCollaboration {
                try Collaborations.start(tx, startedCollaboration, owner: sender, container: conversation.container,
                                         environment: conversation.environment, at: now)
                body["collaborationIdentifier"] = .string(startedCollaboration.identifier)
            }
            let event = try Self.append(tx, conversation: id, kind: .message, actor: sender, subject: nil, body: body, at: now)
            for link in pickedLinks {
                // Every form of a share's URL (another host, a query) is filed under the one its
                // collaboration has, so it is one highlight with its notices (W17), and that one
                // is never a stranger's (W18).
                let share = try Collaborations.registerShareURL(tx, link.url, sender: sender, publicURL: publicURL,
                                                                container: conversation.container, environment: conversation.environment, at: now)
                let url = share?.url ?? link.url
                let host = url == link.url ? link.host : (MessageLinks.normalize(url)?.host ?? link.host)
                try tx.putConversationLink(conversation: id, url: url, seq: event.seq, sender: sender)
                for member in conversation.members {
                    try tx.putSharedLink(StoredSharedLink(viewer: member, container: conversation.container, environment: conversation.environment,
                                                          url: url, conversationID: id, host: host, sender: sender,
                                                          eventID: event.eventID, sentAt: now, title: link.title))
                }
            }
            var effects = ConversationHub.Effects(container: conversation.container, environment: conversation.environment)
            effects.envelopes.append((ConversationCodec.envelope(event), Set(conversation.members)))
            if !pickedLinks.isEmpty { effects.highlightViewers = Set(conversation.members) }
            // After the message, so the notices follow it in the timeline (the share URL is registered by now).
            let notices = try ShareMembershipNotices.post(tx, invited.changes, actor: sender, container: conversation.container,
                                                          environment: conversation.environment, at: now)
            effects.envelopes += notices.envelopes
            return (event, effects, invited.events)
        }, afterCommit: { result in
            hub.publish(result.1)
            for event in result.2 { changeHub?.publish(event) }
        }).0
    }

    /// The conversation's timeline after `continuationMarker` (a sequence from an earlier page;
    /// 0 = from the start), oldest first, at most `limit` (1…200). Mention notices for someone
    /// else are left out, and so is everything from before the viewer joined (or joined again):
    /// as in Messages, a new member does not read the earlier conversation (W3).
    /// - Returns: the events, the marker for the next page, and whether more follow.
    /// - Throws: `NOT_FOUND` for an unknown conversation or a caller who is not a member.
    public func history(conversation id: String, viewer: String, after marker: Int64, limit: Int, in place: Place) throws
        -> (events: [StoredConversationEvent], marker: Int64, moreComing: Bool) {
        try store.read { reader in
            _ = try Self.requireMember(reader, conversation: id, user: viewer, in: place)
            let page = try reader.conversationEvents(conversation: id, viewer: viewer, after: marker, limit: limit + 1)
            let more = page.count > limit
            let taken = Array(page.prefix(limit))
            let visible = taken.filter { $0.kind != .notice || $0.subject == nil || $0.subject == viewer }
            return (visible, taken.last?.seq ?? marker, more)
        }
    }

    /// Pins or unpins a link shared in the conversation, for the caller only. A pinned link is a
    /// highlight regardless of contacts and of the conversation's consent (spec §1.1, D22).
    /// - Throws: `NOT_FOUND` for an unknown conversation, a non-member, or a URL never shared there.
    public func pin(url: String, conversation id: String, viewer: String, pinned: Bool, in place: Place) throws {
        guard let (sent, _) = MessageLinks.normalize(url) else { throw CloudKitError.badRequest("'\(url.prefix(200))' is not an http(s) URL") }
        let now = Clock.milliseconds()
        let hub = self.hub
        try store.write({ tx -> ConversationHub.Effects in
            let conversation = try Self.requireMember(tx, conversation: id, user: viewer, in: place)
            // Any form of a Tandem share's URL pins its collaboration's (W20).
            let normalized = try ShareURLs.filed(tx, sent, container: conversation.container, environment: conversation.environment)
            guard try tx.links(conversation: id).contains(normalized) else {
                throw CloudKitError(.notFound, "'\(normalized)' was not shared in this conversation")
            }
            try tx.setPin(viewer: viewer, conversation: id, url: normalized, pinned: pinned, at: now)
            var effects = ConversationHub.Effects(container: conversation.container, environment: conversation.environment)
            effects.highlightViewers = [viewer]
            return effects
        }, afterCommit: { hub.publish($0) })
    }
}
