public import Foundation

/// A WebSocket client connection over libwebsockets' client role (libcurl on Debian has no
/// WebSocket support, so `URLSessionWebSocketTask` is not an option on Linux).
///
/// ```swift
/// let client = try await WebSocketClient.connect(
///     to: URL(string: "ws://127.0.0.1:8080/stream/1/iCloud.com.example/development")!,
///     headers: [("Authorization", "Bearer \(token)")])
/// await client.send(text: "hello")
/// for await event in client.events {
///     switch event {
///     case .message(let message): handle(message)
///     case .closed(let close): print("closed", close.code, close.reason)
///     }
/// }
/// ```
///
/// - Every client in the process shares one libwebsockets context and service thread, started
///   on the first `connect`; messages are reassembled there and handed to `events`.
/// - `events` yields messages in order and ends with exactly one `.closed` (the peer's code
///   and reason; 1006 if the connection was lost without a close frame). It buffers without
///   bound, so keep reading it. One consumer.
/// - Sending is safe from any number of tasks; messages go out in the order their `send`
///   calls queued them. The send queue is bounded (`WebSocketConfiguration`): a reliable
///   `send` suspends while it is full, a droppable one is dropped instead.
/// - Keep-alive: pings after `pingInterval` seconds without a pong, and the connection is
///   closed after `pongTimeout` (lws' validity timer, as on the server).
/// - Plain `ws://` only; `wss://` (TLS) is refused with `.unsupported`.
/// - Releasing the client without `close()` closes the connection with 1001.
/// - Should the shared service loop stop (a libwebsockets failure), every connection ends:
///   `events` with `.closed` (1006, saying so), a `connect` in progress and every later one
///   with `.clientStopped`. Nothing hangs.
public final class WebSocketClient: Sendable {
    /// What arrives on a client connection.
    public enum Event: Sendable, Equatable {
        case message(WebSocketMessage)
        /// The last event: how the connection ended.
        case closed(WebSocketClose)
    }

    /// Incoming messages, then the close. Single consumer.
    public let events: AsyncStream<Event>
    /// Unique in this process.
    public let id: UInt64
    private let channel: WebSocketChannel

    private init(events: AsyncStream<Event>, channel: WebSocketChannel) {
        self.events = events
        self.id = channel.id
        self.channel = channel
    }

    deinit {
        channel.requestClose(WebSocketClose(code: WebSocketClose.goingAway), immediate: false)
    }

    /// Connects and completes the handshake.
    ///
    /// - Parameters:
    ///   - url: `ws://host[:port]/path[?query]`; host an IP literal or a name.
    ///   - headers: extra handshake headers, e.g. `("Authorization", "Bearer …")`.
    ///   - configuration: limits and keep-alive for this connection.
    ///   - localAddress: the IPv4 address to connect from (an address of this machine, e.g.
    ///     `127.0.0.2`); nil lets the system choose. One source address has about 28,000
    ///     ports for one server address (`net.ipv4.ip_local_port_range`), so a client opening
    ///     more connections than that to one server spreads them over several (the benchmark's
    ///     100,000 idle clients over 127.0.0.2–6).
    /// - Throws: `WebSocketError` `.invalidURL`, `.unsupported` (wss), `.connectFailed`
    ///   (refused, no 101, the local address cannot be bound, or no answer within
    ///   `ClientLoop.connectTimeout` seconds: 10), `.clientStopped` (the process's client loop
    ///   has stopped).
    public static func connect(to url: URL, headers: [(String, String)] = [],
                               configuration: WebSocketConfiguration = WebSocketConfiguration(),
                               localAddress: String? = nil)
        async throws(WebSocketError) -> WebSocketClient {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
              let host = url.host, !host.isEmpty else {
            throw WebSocketError(code: .invalidURL, reason: "expected ws://host[:port]/path", url: url.absoluteString)
        }
        guard scheme == "ws" else {
            throw WebSocketError(code: .unsupported, reason: "wss (TLS) is not supported", url: url.absoluteString)
        }
        if let problem = configuration.problem {
            throw WebSocketError(code: .invalidURL, reason: problem, url: url.absoluteString)
        }
        let loop = try ClientLoop.shared()
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let channel = WebSocketChannel(id: loop.makeID(), wsi: nil, configuration: configuration,
                                       policy: .reportFull, notifier: loop, counters: nil)
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let target = ClientConnection.Target(host: host, port: url.port ?? 80, path: path, headers: headers, localAddress: localAddress)
        do {
            try await withCheckedThrowingContinuation { (established: CheckedContinuation<Void, any Error>) in
                loop.open(ClientConnection(target: target, channel: channel, events: continuation,
                                           established: established))
            }
        } catch {
            throw (error as? WebSocketError)
                ?? WebSocketError(code: .connectFailed, reason: "\(error)", url: url.absoluteString)
        }
        return WebSocketClient(events: events, channel: channel)
    }

    /// Sends a text message. A reliable one (`droppable: false`) waits while the send queue is
    /// full; a droppable one is dropped instead. `.closed` once the connection is closing.
    @discardableResult
    public func send(text: String, droppable: Bool = false) async -> WebSocketSendResult {
        await send(OutboundMessage(payload: Array(text.utf8), isBinary: false, droppable: droppable))
    }

    /// Sends a binary message; `droppable` as for `send(text:droppable:)`.
    @discardableResult
    public func send(binary: [UInt8], droppable: Bool = false) async -> WebSocketSendResult {
        await send(OutboundMessage(payload: binary, isBinary: true, droppable: droppable))
    }

    /// Closes after writing what is queued; `events` ends with the server's answer.
    public func close(_ close: WebSocketClose = WebSocketClose(code: WebSocketClose.normal)) {
        channel.requestClose(close, immediate: false)
    }

    /// Droppable messages dropped so far because the send queue was full.
    public var droppedMessages: Int { channel.droppedMessages }

    private func send(_ message: OutboundMessage) async -> WebSocketSendResult {
        while true {
            switch channel.offer(message) {
            case .queued: return .queued
            case .dropped: return .dropped
            case .closed: return .closed
            case .full: await channel.waitForRoom(for: message.payload.count)
            }
        }
    }
}
