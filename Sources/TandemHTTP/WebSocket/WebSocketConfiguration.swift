import CWebSockets

/// Limits and keep-alive of WebSocket connections, on the server (`HTTPServerConfiguration.webSocket`)
/// and in `WebSocketClient`.
///
/// ```swift
/// var configuration = HTTPServerConfiguration(port: 8080)
/// configuration.webSocket.sendQueueBytes = 1 << 20
/// configuration.webSocket.pingInterval = 20
/// ```
public struct WebSocketConfiguration: Sendable {
    /// The largest message accepted, all fragments together, in bytes. A larger one closes the
    /// connection with 1009 (`WebSocketClose.messageTooBig`).
    public var maxMessageBytes: Int
    /// Messages waiting to be written beyond which the send queue is full.
    public var sendQueueMessages: Int
    /// Payload bytes waiting to be written beyond which the send queue is full. A message
    /// larger than this is queued only when the queue is empty.
    public var sendQueueBytes: Int
    /// Received messages not yet handled (by the responder on the server, waiting for its
    /// decision to accept included) beyond which the connection stops reading, so TCP slows
    /// the peer down, until the backlog halves. Bytes.
    public var receiveBacklogBytes: Int
    /// Seconds without a pong after which a ping is sent (libwebsockets' validity timer,
    /// `lws_retry_bo_t.secs_since_valid_ping`). 1...65535.
    public var pingInterval: Int
    /// Seconds without a pong after which the peer is considered dead and the connection
    /// closed (`secs_since_valid_hangup`). Greater than `pingInterval`, at most 65535.
    public var pongTimeout: Int

    public init(maxMessageBytes: Int = 16 << 20,
                sendQueueMessages: Int = 4096,
                sendQueueBytes: Int = 16 << 20,
                receiveBacklogBytes: Int = 16 << 20,
                pingInterval: Int = 30,
                pongTimeout: Int = 60) {
        self.maxMessageBytes = maxMessageBytes
        self.sendQueueMessages = sendQueueMessages
        self.sendQueueBytes = sendQueueBytes
        self.receiveBacklogBytes = receiveBacklogBytes
        self.pingInterval = pingInterval
        self.pongTimeout = pongTimeout
    }

    /// Why the values cannot be used, or `nil`.
    var problem: String? {
        if maxMessageBytes < 1 { return "webSocket.maxMessageBytes must be at least 1" }
        if sendQueueMessages < 1 || sendQueueBytes < 1 { return "webSocket send queue limits must be at least 1" }
        if receiveBacklogBytes < 1 { return "webSocket.receiveBacklogBytes must be at least 1" }
        if !(1...65534).contains(pingInterval) { return "webSocket.pingInterval must be 1...65534 seconds" }
        if !(pingInterval + 1...65535).contains(pongTimeout) {
            return "webSocket.pongTimeout must be greater than pingInterval and at most 65535 seconds"
        }
        return nil
    }
}

extension lws_retry_bo_t {
    /// lws' validity timer for `configuration`: ping after `pingInterval` seconds without a
    /// pong, hang up after `pongTimeout`. No retry table (nothing reconnects by itself).
    static func idle(_ configuration: WebSocketConfiguration) -> lws_retry_bo_t {
        var policy = lws_retry_bo_t()
        policy.secs_since_valid_ping = UInt16(configuration.pingInterval)
        policy.secs_since_valid_hangup = UInt16(configuration.pongTimeout)
        return policy
    }
}
