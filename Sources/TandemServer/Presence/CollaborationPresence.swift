import Dispatch
import TandemCore
import TandemHTTP
import TandemStore

/// Who has a collaboration open now (SharedWithYou `SWCollaborationView.activeParticipantCount`;
/// decisions R27–R30), on the stream WebSocket.
///
/// Client → server, each naming a `collaborationIdentifier` (a highlight's, e.g. `share:{shortGUID}`):
/// - `{"type":"presence.open","collaborationIdentifier":…}`: this connection has the item open
///   (it counts) and hears updates;
/// - `{"type":"presence.watch","collaborationIdentifier":…}`: hears updates without counting;
/// - `{"type":"presence.close","collaborationIdentifier":…}`: neither any more.
/// Sending `open` or `watch` again renews it; one not renewed for `lifetime` ends, as does
/// everything of a connection when it closes.
///
/// Server → client: `{"type":"presence","collaborationIdentifier":…,"activeParticipantCount":N,
/// "participants":[userRecordName…]}` (distinct people, sorted) at once and after every change,
/// only to connections of the collaboration's audience (`CollaborationAudience`, read again at
/// each change, so someone removed stops hearing and stops counting). Anyone else, or an unknown
/// identifier, gets `{"type":"error","collaborationIdentifier":…,"reason":"no collaboration …"}`
/// and nothing more. Work runs on the conversation hub's queue, never on the service thread.
///
/// Across nodes (decisions N55–N56; CollaborationPresence+Cluster.swift): each node tells the
/// others who has each collaboration open through it, and counts theirs with its own; a node
/// silent for 3 s (`silence`; the session heartbeat, N24) stops counting.
final class CollaborationPresence: Sendable {
    /// How long an `open` or `watch` lasts without being sent again (milliseconds).
    static let lifetime: Int64 = 60_000
    /// Most collaborations one connection may open or watch at a time.
    static let perConnection = 64

    typealias Key = PresenceTraffic.Room

    private struct Entry: Sendable {
        var connection: WebSocketConnection
        var user: String
        var isOpen: Bool
        var expiresAt: Int64
    }

    /// Connections per collaboration, by connection ID.
    private let rooms = Locked<[Key: [UInt64: Entry]]>([:])
    private let store: any Store
    let hub: ConversationHub
    private let log: RequestLog?
    /// The bus to other nodes; nil on a node of its own.
    let bus: EventBus?
    /// What the other nodes said and what this node told them (CollaborationPresence+Cluster.swift).
    let cluster = Locked(Cluster())

    init(store: any Store, hub: ConversationHub, log: RequestLog?, bus: EventBus? = nil) {
        self.store = store
        self.hub = hub
        self.log = log
        self.bus = bus
        if let bus { connect(to: bus) }
    }

    static func handles(_ type: String) -> Bool { type.hasPrefix("presence.") }

    /// Called on the service thread with an envelope `handles` accepts.
    func handle(_ type: String, _ envelope: JSONValue, on connection: WebSocketConnection, user: String, container: String,
                environment: Environment) {
        guard let id = envelope["collaborationIdentifier"]?.stringValue, !id.isEmpty, id.utf8.count <= 1024, !id.utf8.contains(0),
              ["presence.open", "presence.watch", "presence.close"].contains(type) else {
            _ = connection.send(text: JSONWriter.string(["type": "error", "reason": "send {\"type\":\"presence.open|presence.watch|presence.close\",\"collaborationIdentifier\":…}"]))
            return
        }
        let key = Key(container: container, environment: environment, collaboration: id)
        hub.enqueue { [self] in
            if type == "presence.close" {
                let removed = rooms.withLock { $0[key]?.removeValue(forKey: connection.id) }
                if removed?.isOpen == true { broadcast(key) }
            } else {
                join(key, connection: connection, user: user, isOpen: type == "presence.open")
            }
        }
    }

    /// Ends everything of a closed connection (called on the service thread).
    func disconnected(_ connection: WebSocketConnection) {
        let changed = rooms.withLock { rooms -> [Key] in
            var changed: [Key] = []
            for key in Array(rooms.keys) {
                guard let entry = rooms[key]?.removeValue(forKey: connection.id) else { continue }
                if rooms[key]?.isEmpty == true { rooms.removeValue(forKey: key) }
                if entry.isOpen { changed.append(key) }
            }
            return changed
        }
        guard !changed.isEmpty else { return }
        hub.enqueue { [self] in for key in changed { broadcast(key) } }
    }

    /// Starts a timer that ends what was not renewed within `lifetime` (every 5 seconds).
    func startExpiry() {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tandem-presence-expiry"))
        timer.schedule(deadline: .now() + 5, repeating: 5)
        timer.setEventHandler { [weak self] in
            guard let self else { return timer.cancel() }
            self.expire(now: Clock.milliseconds())
        }
        timer.resume()
        if bus != nil { startSweep() }
    }

    func expire(now: Int64) {
        let changed = rooms.withLock { rooms -> [Key] in
            var changed: [Key] = []
            for (key, entries) in rooms {
                let gone = entries.filter { $0.value.expiresAt <= now }
                guard !gone.isEmpty else { continue }
                for id in gone.keys { rooms[key]?.removeValue(forKey: id) }
                if rooms[key]?.isEmpty == true { rooms.removeValue(forKey: key) }
                if gone.values.contains(where: \.isOpen) { changed.append(key) }
            }
            return changed
        }
        guard !changed.isEmpty else { return }
        hub.enqueue { [self] in for key in changed { broadcast(key) } }
    }

    /// On the hub's queue: admits the connection when its user is in the audience, then tells
    /// everyone (or, when nothing changed for others, the joining connection) who is there.
    private func join(_ key: Key, connection: WebSocketConnection, user: String, isOpen: Bool) {
        let audience: Set<String>?
        do { audience = try store.read { try CollaborationAudience.people($0, collaboration: key.collaboration, container: key.container,
                                                                            environment: key.environment) } } catch {
            log?.message("presence audience failed: \(error)")
            return
        }
        guard let audience, audience.contains(user) else {
            // The same answer for "unknown" and "not yours": a stranger learns nothing (R28).
            _ = connection.send(text: JSONWriter.string(["type": "error", "collaborationIdentifier": .string(key.collaboration),
                                                         "reason": .string("no collaboration '\(key.collaboration)'")]))
            return
        }
        let expiresAt = Clock.milliseconds() + Self.lifetime
        let outcome = rooms.withLock { rooms -> (admitted: Bool, changed: Bool) in
            // Closed meanwhile: `disconnected` has run or will find nothing, so nothing may stay.
            guard !connection.isClosed else { return (true, false) }
            let previous = rooms[key]?[connection.id]
            if previous == nil {
                let count = rooms.values.reduce(0) { $0 + ($1[connection.id] == nil ? 0 : 1) }
                guard count < Self.perConnection else { return (false, false) }
            }
            rooms[key, default: [:]][connection.id] = Entry(connection: connection, user: user, isOpen: isOpen, expiresAt: expiresAt)
            return (true, previous?.isOpen != isOpen)
        }
        guard outcome.admitted else {
            _ = connection.send(text: JSONWriter.string(["type": "error", "collaborationIdentifier": .string(key.collaboration),
                                                         "reason": .string("at most \(Self.perConnection) collaborations per connection")]))
            return
        }
        if outcome.changed { broadcast(key, audience: audience) } else { send(key, audience: audience, to: connection.id) }
    }

    /// On the hub's queue: sends the room's state to every connection of its audience.
    func broadcast(_ key: Key, audience known: Set<String>? = nil) {
        let audience: Set<String>
        if let known { audience = known } else {
            do {
                audience = try store.read { try CollaborationAudience.people($0, collaboration: key.collaboration, container: key.container,
                                                                             environment: key.environment) } ?? []
            } catch {
                log?.message("presence audience failed: \(error)")
                return
            }
        }
        send(key, audience: audience, to: nil)
    }

    /// Whether any connection of this node opens or watches `key`.
    func hasConnections(_ key: Key) -> Bool { rooms.withLock { $0[key]?.isEmpty == false } }

    /// Sends the state to one connection, or to all (`nil`); drops connections whose people left the audience.
    private func send(_ key: Key, audience: Set<String>, to only: UInt64?) {
        let entries = rooms.withLock { rooms -> [Entry] in
            guard var entries = rooms[key] else { return [] }
            entries = entries.filter { audience.contains($0.value.user) }
            rooms[key] = entries.isEmpty ? nil : entries
            return Array(entries.values)
        }
        let here = Set(entries.filter(\.isOpen).map(\.user))
        if only == nil { tellOtherNodes(key, here) }
        let present = here.union(elsewhere(key).filter(audience.contains)).sorted()
        let text = JSONWriter.string(["type": "presence", "collaborationIdentifier": .string(key.collaboration),
                                      "activeParticipantCount": .int(Int64(present.count)),
                                      "participants": .array(present.map(JSONValue.string))])
        for entry in entries where only == nil || entry.connection.id == only { _ = entry.connection.send(text: text) }
    }
}
