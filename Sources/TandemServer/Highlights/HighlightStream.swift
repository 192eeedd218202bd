import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Highlight snapshots on the stream WebSocket. A client sends
/// `{"type":"highlights.subscribe","app":"TEAMID.bundle.id"}` and gets the full ordered list at
/// once, then again whenever the list, its order or the authorization state changes (snapshots,
/// never deltas: SharedWithYou `highlightCenterHighlightsDidChange`):
/// `{"type":"highlights","app":…,"authorization":"allowed"|"deniedGlobally"|"deniedForApp","highlights":[…],"people":{…}}`
/// (`people`: the senders' and owners' names and pictures the viewer may see, R32).
/// Work runs on the conversation hub's queue, never on the WebSocket service thread.
final class HighlightStream: Sendable {
    private struct Subscription: Sendable {
        var connection: WebSocketConnection
        var user: String
        var container: String
        var environment: Environment
        /// The server's base URL as this client reaches it (avatar URLs).
        var baseURL: String
        /// The last snapshot text sent per app, so an unchanged list is not sent again.
        var apps: [String: String]
    }

    private let subscriptions = Locked<[UInt64: Subscription]>([:])
    /// Viewers waiting for a refresh, by container environment ("" = every container); one
    /// drain runs for all that piled up, so a burst of messages costs one snapshot per receiver.
    private let dirty = Locked<(viewers: [DirtyKey: Set<String>], scheduled: Bool)>(([:], false))

    private struct DirtyKey: Hashable {
        var container: String
        var environment: Environment
    }
    private let service: HighlightService
    private let hub: ConversationHub
    private let signer: AssetURLSigner?
    private let log: RequestLog?

    init(service: HighlightService, hub: ConversationHub, signer: AssetURLSigner?, log: RequestLog?) {
        self.service = service
        self.hub = hub
        self.signer = signer
        self.log = log
        hub.setHighlightRefresher { [weak self] viewers, container, environment in
            self?.refresh(viewers: viewers, container: container, environment: environment)
        }
    }

    /// Called on the service thread: records the subscription and queues the first snapshot.
    func subscribe(_ connection: WebSocketConnection, user: String, container: String, environment: Environment, baseURL: String, app: String) {
        subscriptions.withLock { all in
            var entry = all[connection.id] ?? Subscription(connection: connection, user: user, container: container, environment: environment,
                                                           baseURL: baseURL, apps: [:])
            entry.apps[app] = ""
            all[connection.id] = entry
        }
        hub.enqueue { [self] in push(connectionID: connection.id, app: app, force: true) }
    }

    func unsubscribe(_ connection: WebSocketConnection) {
        _ = subscriptions.withLock { $0.removeValue(forKey: connection.id) }
    }

    /// On the hub's queue: marks these viewers for a refresh (every container when `container`
    /// is empty); the first mark schedules one drain after what is already queued.
    func refresh(viewers: Set<String>, container: String, environment: Environment) {
        let schedule = dirty.withLock { state -> Bool in
            state.viewers[DirtyKey(container: container, environment: environment), default: []].formUnion(viewers)
            defer { state.scheduled = true }
            return !state.scheduled
        }
        if schedule { hub.enqueue { [self] in drain() } }
    }

    private func drain() {
        let pending = dirty.withLock { state -> [DirtyKey: Set<String>] in
            defer { state = ([:], false) }
            return state.viewers
        }
        for (key, viewers) in pending { push(viewers: viewers, container: key.container, environment: key.environment) }
    }

    /// Recomputes the lists of these viewers and sends the changed ones.
    private func push(viewers: Set<String>, container: String, environment: Environment) {
        let targets = subscriptions.withLock { all in
            all.values.filter { viewers.contains($0.user) && (container.isEmpty || ($0.container == container && $0.environment == environment)) }
                .flatMap { entry in entry.apps.keys.map { (entry.connection.id, $0) } }
        }
        for (id, app) in targets { push(connectionID: id, app: app, force: false) }
    }

    private func push(connectionID: UInt64, app: String, force: Bool) {
        guard let entry = subscriptions.withLock({ $0[connectionID] }) else { return }
        let envelope: JSONValue
        do {
            let snapshot = try service.snapshot(viewer: entry.user, appID: app, container: entry.container, environment: entry.environment)
            let people = try service.store.read { reader in
                try PeoplePresenter(reader: reader, viewer: entry.user, baseURL: entry.baseURL, signer: signer).people(of: snapshot.highlights)
            }
            envelope = ["type": "highlights", "app": .string(app), "authorization": .string(snapshot.authorization.rawValue),
                        "highlights": .fragment(snapshot.json), "people": .object(people)]
        } catch let error as CloudKitError {
            envelope = ["type": "error", "reason": .string(error.reason)]
        } catch {
            // The subscriber hears why nothing came, as for a refused subscription.
            log?.message("highlight snapshot failed: \(error)")
            envelope = ["type": "error", "reason": "the highlight list could not be read; subscribe again"]
        }
        let text = JSONWriter.string(envelope)
        let changed = subscriptions.withLock { all -> Bool in
            guard var current = all[connectionID], current.apps[app] != nil else { return false }
            guard force || current.apps[app] != text else { return false }
            current.apps[app] = text
            all[connectionID] = current
            return true
        }
        if changed { _ = entry.connection.send(text: text) }
    }
}
