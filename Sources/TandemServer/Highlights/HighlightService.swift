import Foundation
public import TandemCore
import TandemCrypto
public import TandemStore

/// The highlight center (SharedWithYou `SWHighlightCenter`): for one viewer and app, the links
/// shared with them in conversations that are universal links of the app (or Tandem share
/// URLs of the container), from contacts (D22), within consent, not hidden, not their own
/// (D23), one per URL with one attribution per conversation (D21), ordered as D20.
///
/// Read from the per-viewer link table (`shared_links`), filtered first by the app's
/// associated hosts through an index, so its cost follows the viewer's links of that app, not
/// the number of messages.
public final class HighlightService: Sendable {
    /// Interactions older than this do not count for the suggested slot (D20), milliseconds.
    public static let interactionWindow: Int64 = 7 * 24 * 3600 * 1000
    /// Weights of interaction feedback: a detail view counts more than a summary view (D20).
    public static let weights: [String: Int64] = ["summary": 1, "detail": 3]

    /// How long a cached list is used without a change (app and association-file changes, and
    /// interactions ageing out of the window, show within this), milliseconds (W10).
    public static let cacheLifetime: Int64 = 5_000

    let store: any Store
    let links: LinkService
    let hub: ConversationHub
    private let cache = Locked<[CacheKey: Snapshot]>([:])

    private struct CacheKey: Hashable {
        var viewer: String
        var appID: String
        var container: String
        var environment: Environment
    }

    /// A computed list with its wire form, and when and at which generation it was computed.
    public struct Snapshot: Sendable {
        public var authorization: HighlightAuthorization
        public var highlights: [Highlight]
        /// The `highlights` array as JSON text, written once.
        public var json: JSONFragment
        var generation: UInt64
        var computedAt: Int64
    }

    /// The list for `viewer` and `appID`, from the cache while nothing it reads changed (at most
    /// `cacheLifetime`), computed otherwise.
    public func snapshot(viewer: String, appID: String, container: String, environment: Environment) throws -> Snapshot {
        let key = CacheKey(viewer: viewer, appID: appID, container: container, environment: environment)
        let generation = hub.generation(of: viewer)
        let now = Clock.milliseconds()
        if let cached = cache.withLock({ $0[key] }), cached.generation == generation, now - cached.computedAt < Self.cacheLifetime {
            return cached
        }
        // The generation is read before computing: a change committed meanwhile makes the next call compute again.
        let (authorization, list) = try highlights(viewer: viewer, appID: appID, container: container, environment: environment)
        let json = JSONFragment(trusted: HighlightCodec.bytes(list))
        let snapshot = Snapshot(authorization: authorization, highlights: list, json: json, generation: generation, computedAt: now)
        cache.withLock { all in
            if all.count >= 10_000 { all.removeAll() }
            all[key] = snapshot
        }
        return snapshot
    }

    init(store: any Store, links: LinkService, hub: ConversationHub) {
        self.store = store
        self.links = links
        self.hub = hub
    }

    /// The ordered highlights of `viewer` for `appID`, with the authorization state. When not
    /// allowed the list is empty.
    /// - Throws: `NOT_FOUND` for an app not registered in the container.
    public func highlights(viewer: String, appID: String, container: String, environment: Environment) throws
        -> (authorization: HighlightAuthorization, highlights: [Highlight]) {
        guard let app = try links.app(appID, container: container) else {
            throw CloudKitError(.notFound, "no app '\(appID)' in container '\(container)' (register it with: tandem app add \(appID) --container \(container))")
        }
        let domains = app.domains.compactMap { try? AssociatedDomain($0, allowPorts: links.allowsPorts) }
        let now = Clock.milliseconds()
        let state = try store.read { reader -> ViewerState? in
            let consent = try reader.consent(viewer: viewer)
            if consent.contains(where: { $0.scope == .global && !$0.allowed }) { return nil }
            if consent.contains(where: { $0.scope == .app && $0.target == appID && !$0.allowed }) {
                return ViewerState(authorization: .deniedForApp)
            }
            var state = ViewerState(authorization: .allowed)
            state.blockedConversations = Set(consent.filter { $0.scope == .conversation && !$0.allowed }.map(\.target))
            let hosts = domains.filter { !$0.isWildcard }.map(\.host)
            let suffixes = domains.filter(\.isWildcard).map { "." + $0.host }
            state.rows = try reader.sharedLinks(viewer: viewer, container: container, environment: environment, hosts: hosts, suffixes: suffixes)
            let shareRows = try reader.sharedShareLinks(viewer: viewer, container: container, environment: environment)
            if !shareRows.isEmpty {
                let seen = Set(state.rows.map { PinKey(conversation: $0.conversationID, url: $0.url) })
                state.rows += shareRows.filter { !seen.contains(PinKey(conversation: $0.conversationID, url: $0.url)) }
            }
            var urls = Set<String>(minimumCapacity: state.rows.count)
            for row in state.rows { urls.insert(row.url) }
            state.urls = urls
            state.collaborations = try reader.collaborations(urls: Array(urls), container: container, environment: environment)
            // A Tandem share's row counts for one of its people, or where one of them sent the
            // URL (W15); elsewhere its title and owner are not the viewer's to see.
            var people: [String: Set<String>] = [:]
            for row in state.rows {
                guard let collaboration = state.collaborations[row.url], collaboration.kind == .share else { continue }
                if people[row.url] == nil { people[row.url] = try SharePeople.of(reader, collaboration) ?? [] }
                let sharePeople = people[row.url]!
                if sharePeople.contains(viewer) { continue }
                if try !SharePeople.sent(reader, url: row.url, in: row.conversationID, byOneOf: sharePeople) {
                    state.unreached.insert(PinKey(conversation: row.conversationID, url: row.url))
                }
            }
            state.contacts = Set(try reader.contacts(owner: viewer).compactMap(\.userRecordName))
            for entry in try reader.coMembers(viewer: viewer, container: container, environment: environment) {
                state.isGroup[entry.conversation] = entry.isGroup
                if entry.member != viewer { state.others[entry.conversation, default: []].append(entry.member) }
            }
            state.hidden = try reader.hiddenURLs(viewer: viewer)
            state.pins = Set(try reader.pins(viewer: viewer).map { PinKey(conversation: $0.conversation, url: $0.url) })
            state.scores = try reader.interactionScores(viewer: viewer, since: now - Self.interactionWindow)
            return state
        }
        guard let state else { return (.deniedGlobally, []) }
        guard state.authorization == .allowed else { return (state.authorization, []) }
        // Tandem share URLs of this container are collaborations of the container's apps (W4);
        // other links must open the app.
        let candidates = state.collaborations.isEmpty ? Array(state.urls) : Array(state.urls.filter { state.collaborations[$0]?.kind != .share })
        let opening = try links.opens(candidates, appID: appID, container: container)
        // D22 per conversation, once: a group surfaces links when another member is a contact.
        var groupFromContact: [String: Bool] = [:]
        for (conversation, others) in state.others where state.isGroup[conversation] == true {
            groupFromContact[conversation] = others.contains(where: state.contacts.contains)
        }
        var byURL: [String: [Highlight.Attribution]] = [:]
        for row in state.rows where !state.hidden.contains(row.url) {
            if !state.unreached.isEmpty && state.unreached.contains(PinKey(conversation: row.conversationID, url: row.url)) { continue }
            let collaboration = state.collaborations[row.url]
            guard collaboration?.kind == .share || opening.contains(row.url) else { continue }
            if row.sender == viewer && collaboration?.owner != viewer { continue }  // D23
            let pinned = !state.pins.isEmpty && state.pins.contains(PinKey(conversation: row.conversationID, url: row.url))
            if !pinned {
                if state.blockedConversations.contains(row.conversationID) { continue }
                let isGroup = state.isGroup[row.conversationID] ?? false
                // D22: 1:1 — the sender is a contact; group — at least one other member is.
                let fromContact = row.sender == viewer
                    || (isGroup ? groupFromContact[row.conversationID] == true : state.contacts.contains(row.sender))
                guard fromContact else { continue }
            }
            byURL[row.url, default: []].append(Highlight.Attribution(sender: row.sender, conversationID: row.conversationID,
                                                                     isGroup: state.isGroup[row.conversationID] ?? false, eventID: row.eventID,
                                                                     date: row.sentAt, pinned: pinned, title: row.title))
        }
        var list = byURL.map { url, attributions in
            let sorted = attributions.sorted { ($0.date, $0.conversationID) > ($1.date, $1.conversationID) }
            return Highlight(identifier: Self.identifier(url), url: url, date: sorted[0].date, pinned: sorted.contains(where: \.pinned),
                             suggested: false, attributions: sorted, collaboration: state.collaborations[url])
        }
        list.sort { ($0.date, $0.url) > ($1.date, $1.url) }
        // D20: the most-interacted highlight first, then pinned, then newest first.
        var ordered: [Highlight] = []
        if let best = list.filter({ (state.scores[$0.url] ?? 0) > 0 }).max(by: { (state.scores[$0.url]!, $0.date) < (state.scores[$1.url]!, $1.date) }) {
            var suggested = best
            suggested.suggested = true
            ordered.append(suggested)
            list.removeAll { $0.url == best.url }
        }
        ordered += list.filter(\.pinned) + list.filter { !$0.pinned }
        return (.allowed, ordered)
    }

    /// The highlight for `url` (SharedWithYou `highlight(for:)`), or nil when the URL is not
    /// one of the viewer's highlights for the app. Any form of a Tandem share's URL finds its
    /// collaboration's highlight (W20).
    public func highlight(url: String, viewer: String, appID: String, container: String, environment: Environment) throws -> Highlight? {
        var normalized = MessageLinks.normalize(url)?.url ?? url
        normalized = try store.read { try ShareURLs.filed($0, normalized, container: container, environment: environment) }
        return try snapshot(viewer: viewer, appID: appID, container: container, environment: environment).highlights
            .first { $0.url == normalized }
    }

    /// Stops surfacing `url` for the viewer in every app ("Hide" in `highlightMenu`).
    /// - Throws: `NOT_FOUND` when the URL was never shared with the viewer in this container.
    public func hide(url: String, viewer: String, container: String, environment: Environment) throws {
        let normalized = try requireShared(url, viewer: viewer, container: container, environment: environment)
        let now = Clock.milliseconds()
        let hub = self.hub
        try store.write({ tx -> ConversationHub.Effects in
            try tx.hide(viewer: viewer, url: normalized, at: now)
            var effects = ConversationHub.Effects(container: container, environment: environment)
            effects.highlightViewers = [viewer]
            return effects
        }, afterCommit: { hub.publish($0) })
    }

    /// Records that the viewer was shown (`summary`) or consumed (`detail`) the highlight
    /// (`SWAttributionView.displayContext`), feeding the suggested slot of D20.
    /// - Throws: `BAD_REQUEST` for another context; `NOT_FOUND` for a URL never shared with the viewer.
    public func feedback(url: String, context: String, viewer: String, container: String, environment: Environment) throws {
        guard let weight = Self.weights[context] else { throw CloudKitError.badRequest("context must be 'summary' or 'detail'") }
        let normalized = try requireShared(url, viewer: viewer, container: container, environment: environment)
        let now = Clock.milliseconds()
        let hub = self.hub
        try store.write({ tx -> ConversationHub.Effects in
            try tx.addInteraction(viewer: viewer, url: normalized, weight: weight, at: now)
            var effects = ConversationHub.Effects(container: container, environment: environment)
            effects.highlightViewers = [viewer]
            return effects
        }, afterCommit: { hub.publish($0) })
    }

    /// The URL as it is filed (any form of a Tandem share's URL: its collaboration's, W20),
    /// once it was shared with the viewer.
    private func requireShared(_ url: String, viewer: String, container: String, environment: Environment) throws -> String {
        guard let sent = MessageLinks.normalize(url)?.url else { throw CloudKitError.badRequest("'\(url.prefix(200))' is not an http(s) URL") }
        return try store.read { reader in
            let normalized = try ShareURLs.filed(reader, sent, container: container, environment: environment)
            let rows = try reader.sharedLinks(viewer: viewer, container: container, environment: environment, url: normalized)
            guard !rows.isEmpty else { throw CloudKitError(.notFound, "'\(sent)' was not shared with you") }
            return normalized
        }
    }

    /// 32 hex digits of SHA-256 of the URL.
    static func identifier(_ url: String) -> String { String(Digest.hex(Digest.sha256(Array(url.utf8))).prefix(32)) }

    private struct PinKey: Hashable {
        var conversation: String
        var url: String
    }

    private struct ViewerState {
        var authorization: HighlightAuthorization
        var rows: [StoredSharedLink] = []
        var urls = Set<String>()
        var collaborations: [String: StoredCollaboration] = [:]
        var contacts = Set<String>()
        var isGroup: [String: Bool] = [:]
        var others: [String: [String]] = [:]
        var hidden = Set<String>()
        var pins = Set<PinKey>()
        var scores: [String: Int64] = [:]
        var blockedConversations = Set<String>()
        /// Tandem share rows of conversations where none of the share's people sent it (W15).
        var unreached = Set<PinKey>()
    }
}
