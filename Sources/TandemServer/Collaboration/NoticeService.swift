import Foundation
public import TandemCore
public import TandemStore

/// Collaboration notices (SharedWithYou `postNotice(for:)`, `clearNotices(for:)`): an event
/// posted for a collaboration highlight appears in every conversation where its link was
/// shared, with the actor; a mention only for the mentioned person.
public final class NoticeService: Sendable {
    let store: any Store
    let hub: ConversationHub

    init(store: any Store, hub: ConversationHub) {
        self.store = store
        self.hub = hub
    }

    /// Posts `request` as `actor`. Returns the notices written into the actor's own
    /// conversations (one per conversation); those of conversations the actor is not in are
    /// written but not listed, so a post tells nobody where else the share was sent.
    /// - Throws: `NOT_FOUND` for an unknown collaboration or one the actor neither owns nor
    ///   received, and for a mention of someone not in any of its conversations.
    public func post(_ request: NoticeRequest, actor: String, container: String, environment: Environment) throws -> [StoredConversationEvent] {
        let now = Clock.milliseconds()
        let hub = self.hub
        return try store.write({ tx -> ([StoredConversationEvent], ConversationHub.Effects) in
            var collaboration: StoredCollaboration?
            if let id = request.collaborationIdentifier { collaboration = try tx.collaboration(id: id, container: container, environment: environment) }
            else if let url = request.url, let sent = MessageLinks.normalize(url)?.url {
                // Any form of a Tandem share's URL names its collaboration (W20).
                let normalized = try ShareURLs.filed(tx, sent, container: container, environment: environment)
                collaboration = try tx.collaboration(url: normalized, container: container, environment: environment)
            }
            guard let collaboration, collaboration.container == container, collaboration.environment == environment else {
                throw CloudKitError(.notFound, "no collaboration highlight for that identifier or URL")
            }
            let conversations = try Self.conversations(tx, sharing: collaboration)
            // A Tandem share's notices are posted by its people only (W14): being in a
            // conversation where someone pasted its URL is not enough.
            let people = try SharePeople.of(tx, collaboration)
            guard collaboration.owner == actor || (people?.contains(actor) ?? conversations.contains(where: { $0.members.contains(actor) })) else {
                throw CloudKitError(.notFound, "no collaboration highlight for that identifier or URL")
            }
            var subject: String?
            if case .mention = request.event {
                if let hash = request.mentionedIdentity {
                    // Identities are issued per collaboration by IdentityService (D24); the mention
                    // reaches the account bound to it, or the person it was issued to.
                    let issued = try tx.identities(container: container, environment: environment.rawValue, collaboration: collaboration.id)
                    guard let identity = issued.last(where: { $0.rootHash == hash && $0.state != .removed }) else {
                        throw CloudKitError(.notFound, "no person with that identity in this collaboration")
                    }
                    subject = identity.boundUser ?? identity.userRecordName
                } else if let handle = request.mentionedHandle {
                    subject = try? ConversationService.resolve(tx, handle)
                    guard subject != nil else { throw CloudKitError(.notFound, "no person with handle '\(handle)'") }
                }
            }
            var effects = ConversationHub.Effects(container: container, environment: environment)
            let posted = try Self.append(tx, collaboration: collaboration, event: request.event, actor: actor, subject: subject,
                                         mentionedHandle: request.mentionedHandle, conversations: conversations, at: now, effects: &effects)
            if subject != nil && posted.isEmpty {
                throw CloudKitError(.notFound, "the mentioned person is not in a conversation where this collaboration was shared")
            }
            let own = Set(conversations.filter { $0.members.contains(actor) }.map(\.id))
            return (posted.filter { own.contains($0.conversationID) }, effects)
        }, afterCommit: { hub.publish($0.1) }).0
    }

    /// The conversations of the collaboration's container that shared its URL. For a Tandem
    /// share, only those where one of the share's people sent it (`SharePeople`, W15): a
    /// conversation of strangers who pasted it, or that a stranger made with one of its people
    /// in it, hears nothing of the share, its title included.
    static func conversations(_ reader: any StoreReading, sharing collaboration: StoredCollaboration) throws -> [StoredConversation] {
        let people = try SharePeople.of(reader, collaboration)
        return try reader.conversationsSharing(url: collaboration.url).compactMap { try reader.conversation(id: $0) }
            .filter { $0.container == collaboration.container && $0.environment == collaboration.environment }
            .filter { conversation in try people.map { try SharePeople.sent(reader, url: collaboration.url, in: conversation.id, byOneOf: $0) } ?? true }
    }

    /// Writes one notice per conversation (only where `subject`, when set, is a member) and
    /// queues its stream envelope.
    static func append(_ tx: any StoreWriting, collaboration: StoredCollaboration, event: NoticeRequest.Event, actor: String, subject: String?,
                       mentionedHandle: String? = nil, conversations: [StoredConversation], at now: Int64,
                       effects: inout ConversationHub.Effects) throws -> [StoredConversationEvent] {
        var notice: JSONObject = ["event": .string(event.name), "collaborationIdentifier": .string(collaboration.id), "url": .string(collaboration.url)]
        if let trigger = event.trigger { notice["trigger"] = .int(Int64(trigger)) }
        if let name = event.triggerName { notice["triggerName"] = .string(name) }
        if let title = collaboration.title { notice["title"] = .string(title) }
        if let subject { notice["mentioned"] = .string(subject) }
        if let mentionedHandle { notice["mentionedHandle"] = .string(mentionedHandle) }
        var posted: [StoredConversationEvent] = []
        for conversation in conversations {
            if let subject, !conversation.members.contains(subject) { continue }
            let stored = try ConversationService.append(tx, conversation: conversation.id, kind: .notice, actor: actor, subject: subject,
                                                        collaboration: collaboration.id, body: ["notice": .object(notice)], at: now)
            posted.append(stored)
            effects.envelopes.append((ConversationCodec.envelope(stored), subject.map { [$0] } ?? Set(conversation.members)))
        }
        return posted
    }

    /// The viewer's notices of a collaboration not cleared yet, oldest first.
    public func notices(collaboration: String, viewer: String, container: String, environment: Environment) throws -> [StoredConversationEvent] {
        try store.read { try $0.notices(viewer: viewer, collaboration: collaboration, container: container, environment: environment) }
    }

    /// Clears the viewer's notices of a collaboration (SharedWithYou `clearNotices(for:)`):
    /// later notices show again.
    /// - Throws: `NOT_FOUND` for an unknown collaboration.
    public func clear(collaboration: String, viewer: String, container: String, environment: Environment) throws {
        try store.write { tx in
            guard try tx.collaboration(id: collaboration, container: container, environment: environment) != nil else {
                throw CloudKitError(.notFound, "no collaboration '\(collaboration)'")
            }
            let latest = try tx.notices(viewer: viewer, collaboration: collaboration, container: container, environment: environment).last?.seq ?? 0
            try tx.clearNotices(viewer: viewer, collaboration: collaboration, container: container, environment: environment, through: latest)
        }
    }
}
