import CWebSockets
import Foundation
import Synchronization
import TandemCore

/// The libwebsockets context and service thread every `WebSocketClient` in the process shares.
///
/// Started on the first connect and kept for the life of the process (it idles in `epoll_wait`,
/// on an `EventLoop` as the server's service thread does).
/// Other threads hand it new connections and attention requests through `inbox` and wake it
/// with `lws_cancel_service`; everything else happens on its thread, like `ServiceLoop`.
///
/// Should its service loop end (`halt(_:)`, which tests use; lws itself has no way to fail the
/// loop since it runs on libev, E33), every connection ends at once: a `connect` in progress throws `.clientStopped`, an
/// open connection's `events` end with `.closed` (1006, the reason saying so) and its senders
/// get `.closed`; every later `connect` in the process throws `.clientStopped` at once. Nothing
/// waits for a thread that is gone.
final class ClientLoop: ChannelAttention, @unchecked Sendable {
    /// Seconds lws allows for connecting and the handshake.
    static let connectTimeout = 10

    private struct Inbox: ~Copyable {
        var opening: [ClientConnection] = []
        var attention: [UInt64] = []
        /// Set once the service loop has ended: why. Later connections fail with it.
        var stopped: String?
        /// `halt(_:)` was called: the service loop should end, with this reason.
        var halt: String?
    }

    private static let instance = Locked<ClientLoop?>(nil)

    /// The shared loop, created on first use.
    static func shared() throws(WebSocketError) -> ClientLoop {
        try instance.withLock { (instance) throws(WebSocketError) -> ClientLoop in
            if let instance { return instance }
            let loop = try ClientLoop()
            instance = loop
            return loop
        }
    }

    private let inbox = Locked(Inbox())
    private let ids = Atomic<UInt64>(1)
    /// Set once in `init`, before the thread starts.
    private var context: OpaquePointer!
    private let protocols: UnsafeMutablePointer<lws_protocols>
    private let protocolName: UnsafeMutablePointer<CChar>

    // Service thread.
    private var connections: [UInt64: ClientConnection] = [:]
    private var halting: String?
    private let scratch: UnsafeMutablePointer<UInt8>
    private let preamble = Int(tandem_lws_pre())
    private let scratchCapacity = ServiceLoop.writeChunkSize

    private init() throws(WebSocketError) {
        LWSLogging.configure()
        protocolName = strdup("tandem-ws-client")!
        protocols = .allocate(capacity: 2)
        protocols.initialize(repeating: lws_protocols(), count: 2)
        protocols[0].name = UnsafePointer(protocolName)
        protocols[0].callback = clientCallback
        scratch = .allocate(capacity: preamble + scratchCapacity)

        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.options = UInt64(LWS_SERVER_OPTION_VALIDATE_UTF8)
        info.timeout_secs = UInt32(Self.connectTimeout)
        // Unretained: the loop lives for the rest of the process once created.
        info.user = Unmanaged.passUnretained(self).toOpaque()
        guard let eventLoop = EventLoop() else {
            throw WebSocketError(code: .contextCreationFailed, reason: "cannot create an epoll loop for the client (errno \(errno))")
        }
        eventLoop.configure(&info)
        guard let context = lws_create_context(&info) else {
            eventLoop.destroy()
            throw WebSocketError(code: .contextCreationFailed, reason: "lws_create_context failed for the client")
        }
        self.context = context
        let thread = Thread { [self] in
            eventLoop.run(self.context) { halting == nil }
            stopped(halting ?? "the loop ended")
        }
        thread.name = "tandem-ws-client"
        thread.stackSize = 1 << 20
        thread.start()
    }

    func makeID() -> UInt64 {
        ids.add(1, ordering: .relaxed).oldValue
    }

    /// Any thread: connect `connection` on the service thread (or fail it at once when the
    /// loop has stopped).
    func open(_ connection: ClientConnection) {
        let stopped = inbox.withLock { inbox -> String? in
            if let stopped = inbox.stopped { return stopped }
            inbox.opening.append(connection)
            return nil
        }
        guard let stopped else {
            lws_cancel_service(context)
            return
        }
        // Never handed to the service thread, so finishing it here races with nothing.
        connection.finish(loopStopped: stopped)
    }

    /// Any thread: the channel has output queued or a close to send.
    func attention(_ channelID: UInt64) {
        let first = inbox.withLock { inbox in
            guard inbox.stopped == nil else { return false }
            inbox.attention.append(channelID)
            return inbox.attention.count == 1 && inbox.opening.isEmpty
        }
        if first { lws_cancel_service(context) }
    }

    /// Ends the service loop as a libwebsockets failure would, with `reason`. Tests use it:
    /// lws fails only on a bug, and what matters is what happens to connections afterwards.
    func halt(_ reason: String) {
        inbox.withLock { $0.halt = reason }
        lws_cancel_service(context)
    }

    /// The service loop ended (service thread, as its last act): says so on standard error,
    /// fails every connection, and makes later ones fail at once. The context is left as it
    /// is: destroying it would call back into connections that are already finished.
    private func stopped(_ reason: String) {
        ErrorReport.line("the WebSocket client loop stopped (\(reason)); every WebSocket client connection of this process ends")
        let opening = inbox.withLock { inbox in
            inbox.stopped = reason
            inbox.attention.removeAll()
            defer { inbox.opening.removeAll() }
            return inbox.opening
        }
        let open = Array(connections.values)
        connections.removeAll()
        for connection in opening + open {
            connection.finish(loopStopped: reason)
        }
    }

    // MARK: Service thread

    /// `LWS_CALLBACK_EVENT_WAIT_CANCELLED`.
    func serviceWoken() {
        let (opening, attention, halt) = inbox.withLock { inbox in
            defer {
                inbox.opening.removeAll()
                inbox.attention.removeAll(keepingCapacity: true)
            }
            return (inbox.opening, inbox.attention, inbox.halt)
        }
        if let halt {
            // Whatever was just handed over is failed by `stopped` with the rest.
            connections.merge(opening.map { ($0.channel.id, $0) }) { first, _ in first }
            halting = halt
            return
        }
        opening.forEach(connect)
        for id in attention {
            connections[id]?.channel.attend()
        }
    }

    private func connect(_ connection: ClientConnection) {
        var info = lws_client_connect_info()
        info.context = context
        info.address = connection.cString(connection.target.host)
        info.port = Int32(connection.target.port)
        info.path = connection.cString(connection.target.path)
        info.host = info.address
        info.local_protocol_name = UnsafePointer(protocolName)
        info.opaque_user_data = Unmanaged.passUnretained(connection).toOpaque()
        info.retry_and_idle_policy = UnsafePointer(connection.idlePolicy)
        if let local = connection.target.localAddress { info.iface = connection.cString(local) }
        connections[connection.channel.id] = connection
        if lws_client_connect_via_info(&info) == nil {
            // lws may already have reported the error through the callback; finish is idempotent.
            connections[connection.channel.id] = nil
            connection.finish(connectError: "lws_client_connect_via_info failed")
        }
    }

    func connection(for wsi: OpaquePointer) -> ClientConnection? {
        guard let box = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<ClientConnection>.fromOpaque(box).takeUnretainedValue()
    }

    func callback(_ wsi: OpaquePointer, _ reason: lws_callback_reasons, _ input: UnsafeMutableRawPointer?,
                  _ length: Int) -> Int32 {
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            serviceWoken()
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            guard let connection = connection(for: wsi), let input else { return -1 }
            return connection.appendHeaders(wsi, cursor: input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self),
                                            remaining: length)
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            connection(for: wsi)?.didEstablish(wsi)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
            end(wsi, connectError: message ?? "connection failed")
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard let connection = connection(for: wsi) else { return -1 }
            switch connection.channel.received(bytes) {
            case .incomplete: break
            case .tooBig: return -1
            case .message(let message): connection.events.yield(.message(message))
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            guard let connection = connection(for: wsi) else { return -1 }
            return connection.channel.writeable(scratch: scratch, preamble: preamble, capacity: scratchCapacity)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            connection(for: wsi)?.channel.peerInitiatedClose(bytes)
        case LWS_CALLBACK_CLIENT_CLOSED:
            end(wsi, connectError: nil)
        case LWS_CALLBACK_WSI_DESTROY:
            end(wsi, connectError: "connection closed during the handshake")
        default:
            break
        }
        return 0
    }

    /// The connection is over: report it, and unlink the wsi before `connections` lets the
    /// object go (lws raises `WSI_DESTROY` after `CLIENT_CLOSED` or a connection error).
    private func end(_ wsi: OpaquePointer, connectError: String?) {
        guard let connection = connection(for: wsi) else { return }
        lws_set_opaque_user_data(wsi, nil)
        connection.finish(connectError: connectError)
        connections[connection.channel.id] = nil
    }
}

/// The client protocol's callback (a plain function: lws keeps a C pointer), on the client
/// service thread.
func clientCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                    _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let box = lws_context_user(context) else { return 0 }
    return Unmanaged<ClientLoop>.fromOpaque(box).takeUnretainedValue().callback(wsi, reason, input, length)
}
