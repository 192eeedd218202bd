public import Foundation
internal import TandemCore

/// Told when the highlight list or its order changes (SharedWithYou
/// `SWHighlightCenterDelegate.highlightCenterHighlightsDidChange(_:)`). Called on the main
/// actor; read `center.highlights` and badge exactly those items.
@MainActor
public protocol HighlightCenterDelegate: AnyObject {
    func highlightCenterHighlightsDidChange(_ highlightCenter: HighlightCenter)
}

/// Links shared with the signed-in user that belong to one app (SharedWithYou
/// `SWHighlightCenter`), over `/tandem/1/{container}/{environment}/highlights/…` and the
/// stream WebSocket.
///
/// ```swift
/// let center = HighlightCenter(container: container, appID: "ABCDE12345.com.example.app")
/// for try await highlights in center.highlightUpdates { render(highlights) }   // full snapshots
/// ```
///
/// Order (D20): the most-interacted highlight of the last 7 days first, then pinned, then newest
/// first. `authorizationState` tells "nothing shared" from "not allowed" (a Tandem addition).
/// Thread-safe. Errors are `TandemError`: `.unknownItem` for an app not registered in the
/// container or a URL that is not a highlight.
public final class HighlightCenter: Sendable {
    /// "Shared with You" (`SWHighlightCenter.highlightCollectionTitle`).
    public static let highlightCollectionTitle = "Shared with You"
    /// Collaboration features are always available on Tandem (`isSystemCollaborationSupportAvailable`).
    public static let isSystemCollaborationSupportAvailable = true

    public let container: Container
    /// `TEAMID.bundle.id`, registered in the container (`tandem app add`).
    public let appID: String
    private let state = LockedState()

    public init(container: Container, appID: String) {
        self.container = container
        self.appID = appID
    }

    /// The latest ordered list (empty before the first fetch or snapshot, and when not allowed).
    public var highlights: [Highlight] { state.read { $0.highlights } }
    /// The latest authorization state.
    public var authorizationState: HighlightAuthorizationState { state.read { $0.authorization } }

    /// Receives `highlightCenterHighlightsDidChange(_:)` for every new snapshot; setting it
    /// opens the stream, clearing it closes it. Held weakly.
    @MainActor public var delegate: (any HighlightCenterDelegate)? {
        get { state.read { $0.delegate } }
        set {
            state.write { $0.delegate = newValue; $0.listener?.cancel(); $0.listener = nil }
            guard newValue != nil else { return }
            let task = Task { [weak self] in
                guard let self else { return }
                do {
                    for try await _ in self.highlightUpdates {
                        await MainActor.run {
                            guard let delegate = self.state.read({ $0.delegate }) else { return }
                            delegate.highlightCenterHighlightsDidChange(self)
                        }
                    }
                } catch {}
            }
            state.write { $0.listener = task }
        }
    }

    /// Full ordered snapshots from the stream WebSocket: the current list at once, then again
    /// whenever it, its order or the authorization changes. Each iteration opens its own
    /// connection; it reconnects with backoff and starts again with a fresh snapshot.
    public var highlightUpdates: AsyncThrowingStream<[Highlight], any Error> {
        let envelopes = StreamEnvelopes(transport: container.transport, types: ["highlights"],
                                        greeting: [["type": "highlights.subscribe", "app": .string(appID)]])
        let appID = self.appID
        return envelopes.stream { [state] envelope in
            guard envelope["app"]?.stringValue == appID else { return nil }
            return state.apply(envelope)
        }
    }

    /// Fetches the list now (`highlights/list`) and updates `highlights` and `authorizationState`.
    @discardableResult
    public func fetchHighlights() async throws(TandemError) -> [Highlight] {
        let json = try await container.transport.json(query("highlights/list", ["app": appID]), body: nil)
        return state.apply(json)
    }

    /// The highlight for a URL (`SWHighlightCenter.highlight(for:)`).
    /// - Throws: `.unknownItem` when the URL is not one of the user's highlights for this app.
    public func highlight(for url: URL) async throws(TandemError) -> Highlight {
        let json = try await container.transport.json(query("highlights/lookup", ["app": appID, "url": url.absoluteString]), body: nil)
        guard let highlight = Highlight(json: json) else { throw TandemError(.serverResponseLost, "the server's highlight is malformed") }
        return highlight
    }

    /// The collaboration highlight for a URL (`collaborationHighlight(for:)`).
    /// - Throws: `.unknownItem` when the URL is not a collaboration highlight.
    public func collaborationHighlight(for url: URL) async throws(TandemError) -> CollaborationHighlight {
        guard let collaboration = try await highlight(for: url).collaboration else {
            throw TandemError(.unknownItem, "\(url) is a highlight but not a collaboration")
        }
        return collaboration
    }

    /// The collaboration highlight with this identifier (`collaborationHighlight(forIdentifier:)`).
    public func collaborationHighlight(forIdentifier identifier: String) async throws(TandemError) -> CollaborationHighlight {
        let json = try await container.transport.json(query("highlights/lookup", ["app": appID, "collaboration": identifier]), body: nil)
        guard let collaboration = Highlight(json: json)?.collaboration else { throw TandemError(.unknownItem, "no collaboration highlight '\(identifier)'") }
        return collaboration
    }

    /// Stops surfacing the highlight for this user ("Hide" in `highlightMenu`).
    public func hide(_ highlight: Highlight) async throws(TandemError) {
        _ = try await container.transport.json(container.transport.tandemURL("highlights/hide"), body: ["url": .string(highlight.url.absoluteString)])
    }

    /// Reports that the highlight was shown (`summary`) or consumed (`detail`), feeding D20's
    /// suggested slot (`SWAttributionView.displayContext`).
    public func recordInteraction(with highlight: Highlight, context: HighlightDisplayContext) async throws(TandemError) {
        _ = try await container.transport.json(container.transport.tandemURL("highlights/feedback"),
                                               body: ["url": .string(highlight.url.absoluteString), "context": .string(context.rawValue)])
    }

    /// Posts a notice into the conversations where the collaboration was shared
    /// (`postNotice(for:)`); a mention reaches only the mentioned person. Returns the notices written.
    /// - Throws: `.unknownItem` for a collaboration you neither own nor received, or a mention of
    ///   someone not in its conversations; `.invalidArguments` for a bad trigger.
    @discardableResult
    public func postNotice(for event: any HighlightEvent) async throws(TandemError) -> [ConversationEvent] {
        let json = try await container.transport.json(container.transport.tandemURL("highlights/notices/post"), body: .object(event.noticeBody))
        return (json["notices"]?.arrayValue ?? []).map { ConversationEvent(json: $0, people: json["people"]) }
    }

    /// The notices of a collaboration you have not cleared, oldest first.
    public func notices(for highlight: CollaborationHighlight) async throws(TandemError) -> [ConversationEvent] {
        let json = try await container.transport.json(query("highlights/notices/list", ["collaboration": highlight.collaborationIdentifier]), body: nil)
        return (json["notices"]?.arrayValue ?? []).map { ConversationEvent(json: $0, people: json["people"]) }
    }

    /// Clears your notices of a collaboration (`clearNotices(for:)`); later ones show again.
    public func clearNotices(for highlight: CollaborationHighlight) async throws(TandemError) {
        _ = try await container.transport.json(container.transport.tandemURL("highlights/notices/clear"),
                                               body: ["collaborationIdentifier": .string(highlight.collaborationIdentifier)])
    }

    private func query(_ operation: String, _ items: [String: String]) -> URL {
        Conversations(transport: container.transport).query(operation, items)
    }
}

/// The center's latest snapshot and delegate, behind a lock.
final class LockedState: @unchecked Sendable {
    struct Value {
        var highlights: [Highlight] = []
        var authorization: HighlightAuthorizationState = .unknown
        weak var delegate: (any HighlightCenterDelegate)?
        var listener: Task<Void, Never>?
    }

    private let lock = NSLock()
    private var value = Value()

    func read<T>(_ body: (Value) -> T) -> T { lock.withLock { body(value) } }
    func write(_ body: (inout Value) -> Void) { lock.withLock { body(&value) } }

    /// Takes a `highlights` envelope or list answer; returns the ordered list.
    func apply(_ json: JSONValue) -> [Highlight] {
        let list = (json["highlights"]?.arrayValue ?? []).compactMap { Highlight(json: $0, people: json["people"]) }
        let authorization = HighlightAuthorizationState(rawValue: json["authorization"]?.stringValue ?? "") ?? .unknown
        write { $0.highlights = list; $0.authorization = authorization }
        return list
    }
}
