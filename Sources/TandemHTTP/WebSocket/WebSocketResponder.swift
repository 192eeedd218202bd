/// The application side of WebSocket connections on an `HTTPServer`.
///
/// ```swift
/// struct Echo: WebSocketResponder {
///     func shouldUpgrade(_ head: HTTPRequestHead) -> Bool { head.path.hasPrefix("/stream/1/") }
///     func accept(_ connection: WebSocketConnection) -> WebSocketDecision {
///         connection.head.headers["authorization"] == "Bearer ok" ? .accept
///             : .refuse(WebSocketClose(code: 4401, reason: "sign in"))
///     }
///     func received(_ message: WebSocketMessage, on connection: WebSocketConnection) {
///         if case .text(let text) = message { connection.send(text: text) }
///     }
///     func closed(_ connection: WebSocketConnection, with close: WebSocketClose) {}
/// }
/// ```
///
/// How an upgrade is decided: `shouldUpgrade(_:)` runs on the service thread and must only
/// look at the head (typically the path); `false` hangs up without a handshake. Otherwise the
/// handshake completes (101) at once and `accept(_:)` runs on a worker, where it may block on
/// a token lookup. Until it answers, messages the client sends are held (bounded by
/// `WebSocketConfiguration.receiveBacklogBytes`; beyond that the server stops reading).
/// `.refuse(close)` closes the connection with that code and reason and drops what was held;
/// `.accept` delivers the held messages, then everything else.
///
/// Threading: `accept`, `received` and `closed` run on the server's worker pool, one call at
/// a time per connection and in order (`accept` first, `closed` last), never on the service
/// thread; different connections run concurrently. A call may block, but a connection whose
/// calls block stops being read once its backlog is full.
public protocol WebSocketResponder: Sendable {
    /// Service thread, must be cheap and not block: whether this `GET` with `Upgrade:
    /// websocket` may become a WebSocket at all (e.g. its path is a stream endpoint).
    func shouldUpgrade(_ head: HTTPRequestHead) -> Bool

    /// Worker thread, may block: accept or refuse the connection. Sending on the connection
    /// from here is allowed (it is written before anything later).
    func accept(_ connection: WebSocketConnection) -> WebSocketDecision

    /// Worker thread: one complete message, in the order the peer sent them.
    func received(_ message: WebSocketMessage, on connection: WebSocketConnection)

    /// Worker thread: the connection is closed (by either side, a lost peer, a slow consumer,
    /// or shutdown); the last call for an accepted connection. Not called for refused ones, nor
    /// for connections still open when the server's grace period ends.
    func closed(_ connection: WebSocketConnection, with close: WebSocketClose)
}

extension WebSocketResponder {
    public func shouldUpgrade(_ head: HTTPRequestHead) -> Bool { true }
    public func closed(_ connection: WebSocketConnection, with close: WebSocketClose) {}
}

/// `WebSocketResponder.accept(_:)`'s answer.
public enum WebSocketDecision: Sendable, Equatable {
    case accept
    /// Close at once with this code and reason (e.g. 4401 "authentication required").
    case refuse(WebSocketClose)
}
