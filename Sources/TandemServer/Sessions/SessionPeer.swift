import Foundation
import TandemCore
import TandemHTTP

/// What a session sends to: a stream connection on this node, or one on another node reached
/// through the bus (`RemotePeer`, decisions N19). `id` is unique on this node.
protocol SessionPeer: AnyObject, Sendable {
    var id: UInt64 { get }
    @discardableResult func send(text: String, droppable: Bool) -> WebSocketSendResult
    @discardableResult func send(binary: [UInt8], droppable: Bool) -> WebSocketSendResult
}

extension SessionPeer {
    @discardableResult func send(text: String) -> WebSocketSendResult { send(text: text, droppable: false) }
}

extension WebSocketConnection: SessionPeer {}

/// A stream connection on another node whose session traffic this node (the session's owner)
/// handles: what is sent to it is published as `SessionTraffic.deliver` for that node, which
/// hands it to the connection in the order published (decisions N19, N20). A frame for several
/// connections on one node leaves as one message for all of them (`fanOut`, N46).
final class RemotePeer: SessionPeer {
    /// This node's name for it: from 2^63 up, apart from local connection IDs.
    let id: UInt64
    let node: String
    let connection: UInt64
    let bus: EventBus
    let container: String
    let environment: String

    init(id: UInt64, node: String, connection: UInt64, bus: EventBus, container: String, environment: String) {
        self.id = id
        self.node = node
        self.connection = connection
        self.bus = bus
        self.container = container
        self.environment = environment
    }

    /// `.dropped` when the bus cannot carry it (over `max_payload`, N61).
    func send(text: String, droppable: Bool) -> WebSocketSendResult {
        bus.publish(.session(SessionTraffic(container: container, environment: environment,
                                            kind: .deliver(receivers: [node: [connection]], text: text, binary: nil, droppable: droppable))))
            ? .queued : .dropped
    }

    func send(binary: [UInt8], droppable: Bool) -> WebSocketSendResult {
        bus.publish(.session(SessionTraffic(container: container, environment: environment,
                                            kind: .deliver(receivers: [node: [connection]], text: nil, binary: Data(binary),
                                                           droppable: droppable))))
        return .queued
    }

    /// Sends `binary` to every one of `receivers`: directly to this node's connections, and as
    /// ONE `deliver` for every other node's connections (N46, N50), which each node hands to its
    /// own in the listed order. Called in the order frames must arrive (under the session's lock
    /// for reliable frames, N20): one publisher's messages keep their order on the bus.
    static func fanOut(binary: [UInt8], droppable: Bool, to receivers: [any SessionPeer]) {
        var remote: [String: [UInt64]] = [:]
        var first: RemotePeer?
        for receiver in receivers {
            guard let peer = receiver as? RemotePeer else {
                _ = receiver.send(binary: binary, droppable: droppable)
                continue
            }
            remote[peer.node, default: []].append(peer.connection)
            if first == nil { first = peer }
        }
        guard let first else { return }
        first.bus.publish(.session(SessionTraffic(container: first.container, environment: first.environment,
                                                  kind: .deliver(receivers: remote, text: nil, binary: Data(binary), droppable: droppable))))
    }
}

/// Group-session traffic between nodes (decisions N19–N22), on the container environment's
/// subject. Every node hears all of it and acts on what names it.
struct SessionTraffic: Codable, Sendable {
    var container: String
    var environment: String
    var kind: Kind

    enum Kind: Codable, Sendable {
        /// Owner → the nodes named in `receivers`: a text or binary message for each of the stream
        /// connections listed for that node (its own IDs), handed to them in that order; messages
        /// keep the order published (N20, N46). One event for all nodes, so a frame is encoded,
        /// sent and decoded once per node, not once per node and receiving node (N50).
        case deliver(receivers: [String: [UInt64]], text: String?, binary: Data?, droppable: Bool)
        /// Any node → every other: `text` for every stream connection of `users` on that node,
        /// except the connections listed as `"node:id"` (reached as participants already).
        case audience(users: Set<String>, text: String, except: Set<String>)
        /// Owner → every node: the session is live (or its activity or audience changed):
        /// `session` is its `{sessionID, conversationID, activity, …}`.
        case announced(owner: String, sessionID: UUID, conversationID: String, audience: Set<String>, session: JSONValue)
        /// Owner → every node: the session ended.
        case ended(sessionID: UUID)
        /// A node → the owner: an envelope (JSON text) or messenger frame from one of its stream
        /// connections, with what the owner needs to know of it.
        case request(owner: String, connection: UInt64, user: String, declared: [String], envelope: String?, frame: Data?)
        /// A node → the owner: that connection closed.
        case disconnected(owner: String, connection: UInt64)
        /// Every node, every second, on `tandem.1.cluster`: it is alive (N24).
        case heartbeat
        /// A node → every other, on `tandem.1.cluster`, as it stops, after its own connections
        /// closed: treat it as gone now, not after 3 s of silence (N65).
        case leaving
        /// Owner → every node: a whole copy of a live session's state (N33).
        case replica(owner: String, replica: SessionReplica)
        /// Owner → every node: one change to a live session's state, in the owner's order (N33).
        case replicate(sessionID: UUID, change: SessionReplica.Change)
        /// A node → the owner: a participant's journal upload, already stored in the shared
        /// `journal/` by that node (N36); the owner adds it to the index.
        case attach(owner: String, sessionID: UUID, participantID: UUID, user: String, attachment: JournalAttachment)
        /// A node → every other: the conversations one of its stream connections declared active
        /// (D35), the latest last; empty when it withdrew them all or closed (N57).
        case declared(connection: UInt64, user: String, conversations: [String])
        /// A node → `from` (every node when nil), on `tandem.1.cluster`: publish your connections'
        /// declarations again. Sent on hearing a node for the first time and after the bus may have
        /// lost messages (N6), so both sides catch up (N57).
        case declarationsWanted(from: String?)
    }
}
