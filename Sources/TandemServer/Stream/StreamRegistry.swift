import TandemCore
import TandemHTTP
import TandemStore

/// The open stream WebSockets, by user: where notifications (and later highlight snapshots and
/// session events) are pushed. Notifications are not droppable: a client too slow to take them
/// is closed as a slow consumer and resumes from its change tokens (DESIGN.md §3).
final class StreamRegistry: NotificationSink, Sendable {
    struct Client: Sendable {
        var connection: WebSocketConnection
        var user: String
        var container: String
        var environment: String
        var deviceID: String
        /// The client asked not to hear of its own device's writes.
        var muteOwnDevice: Bool
        /// Milliseconds since 1970 when the WebSocket was accepted.
        var connectedAt: Int64 = Clock.milliseconds()
    }

    private let clients = Locked<[UInt64: Client]>([:])

    func add(_ client: Client) { clients.withLock { $0[client.connection.id] = client } }
    func remove(_ connection: WebSocketConnection) { _ = clients.withLock { $0.removeValue(forKey: connection.id) } }
    var count: Int { clients.withLock { $0.count } }

    /// The open streams of one container environment, oldest first (the console, decisions C43).
    func clients(container: String, environment: String) -> [Client] {
        clients.withLock { all in all.values.filter { $0.container == container && $0.environment == environment } }
            .sorted { ($0.connectedAt, $0.connection.id) < ($1.connectedAt, $1.connection.id) }
    }

    /// The client on `connection`, if it is open.
    func client(_ connection: WebSocketConnection) -> Client? { clients.withLock { $0[connection.id] } }

    /// Sends an envelope's text to every stream of these users in one container environment
    /// (conversation events, notices, highlight snapshots).
    func send(_ text: String, to users: Set<String>, container: String, environment: String) {
        let targets = clients.withLock { all in
            all.values.filter { users.contains($0.user) && $0.container == container && $0.environment == environment }
        }
        for client in targets { _ = client.connection.send(text: text) }
    }

    /// The `resync` envelope (decisions N43): events from other nodes may have been missed, so
    /// what the client built from this stream (pushes, highlight snapshots) may be out of date;
    /// it fetches changes from its tokens and its highlight lists again. The reason is fixed
    /// text: the bus's own reason (a libnats error, a node's id) stays in the server's log.
    static let resyncEnvelope = JSONWriter.string([
        "type": "resync",
        "reason": "the server may have missed changes made through other nodes; fetch changes from your change tokens",
    ])

    /// From now on, every open stream is sent `resync` each time the bus hands `.missed` (N6).
    /// Connected after the conversation hub, so highlight lists read after it are fresh.
    func connect(to bus: EventBus) {
        bus.subscribe { [weak self] delivery in
            guard let self, case .missed = delivery else { return }
            for client in clients.withLock({ Array($0.values) }) { _ = client.connection.send(text: Self.resyncEnvelope) }
        }
    }

    func deliver(_ notification: PushNotification) {
        let targets = clients.withLock { all in
            all.values.filter { client in
                client.user == notification.recipient && client.container == notification.container
                    && client.environment == notification.environment
                    && !(client.muteOwnDevice && !client.deviceID.isEmpty && client.deviceID == notification.originDeviceID)
            }
        }
        guard !targets.isEmpty else { return }
        let text = JSONWriter.string(["type": "notification", "notification": notification.json])
        for client in targets { _ = client.connection.send(text: text) }
    }
}
