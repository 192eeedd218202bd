/// One accepted WebSocket on an `HTTPServer`, as its `WebSocketResponder` sees it.
///
/// ```swift
/// connection.send(text: #"{"type":"notification"}"#)                 // must arrive, or close
/// connection.send(binary: frame, droppable: true)                    // may be dropped when behind
/// connection.close(WebSocketClose(code: 4403, reason: "share revoked"))
/// ```
///
/// Safe from any thread and any number of tasks; no call blocks or waits for the peer. Each
/// connection has a send queue bounded by `WebSocketConfiguration.sendQueueMessages` and
/// `sendQueueBytes`: when it is full, droppable messages are dropped (counted in
/// `droppedMessages` and `HTTPServer.droppedWebSocketMessages`), and a message that is not
/// droppable and does not fit even after dropping the droppable ones closes the connection at
/// once with `WebSocketClose.slowConsumer`, discarding the queue. Messages are written in the
/// order they were queued; large ones as several frames.
public final class WebSocketConnection: Sendable {
    /// Unique for the server's lifetime, never reused.
    public let id: UInt64
    /// The upgrade request: path, query, headers (with `authorization`), peer address.
    public let head: HTTPRequestHead
    let channel: WebSocketChannel

    init(head: HTTPRequestHead, channel: WebSocketChannel) {
        self.id = channel.id
        self.head = head
        self.channel = channel
    }

    /// Queues a text message. `droppable`: it may be dropped when the peer falls behind
    /// (unreliable session traffic); otherwise falling behind closes the connection.
    @discardableResult
    public func send(text: String, droppable: Bool = false) -> WebSocketSendResult {
        send(OutboundMessage(payload: Array(text.utf8), isBinary: false, droppable: droppable))
    }

    /// Queues a binary message; `droppable` as for `send(text:droppable:)`.
    @discardableResult
    public func send(binary: [UInt8], droppable: Bool = false) -> WebSocketSendResult {
        send(OutboundMessage(payload: binary, isBinary: true, droppable: droppable))
    }

    /// Closes with `close` after writing what is already queued (bounded by the idle timeout).
    /// Later sends answer `.closed`. The first close asked for wins.
    public func close(_ close: WebSocketClose = WebSocketClose(code: WebSocketClose.normal)) {
        channel.requestClose(close, immediate: false)
    }

    /// Droppable messages dropped on this connection so far.
    public var droppedMessages: Int { channel.droppedMessages }

    /// Whether the connection is closed or closing; sends then answer `.closed`.
    public var isClosed: Bool { channel.isClosed }

    private func send(_ message: OutboundMessage) -> WebSocketSendResult {
        switch channel.offer(message) {
        case .queued: .queued
        case .dropped: .dropped
        case .closed, .full: .closed
        }
    }
}
