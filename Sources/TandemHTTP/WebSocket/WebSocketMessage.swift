/// One complete WebSocket message: text or binary, reassembled from its frames.
///
/// ```swift
/// switch message {
/// case .text(let string): print(string)
/// case .binary(let bytes): print(bytes.count, "bytes")
/// }
/// ```
///
/// Text messages are valid UTF-8 (libwebsockets validates them and closes the connection with
/// 1007 otherwise). RFC 6455 section 5.6.
public enum WebSocketMessage: Sendable, Equatable {
    case text(String)
    case binary([UInt8])

    /// The payload size on the wire, in bytes.
    public var byteCount: Int {
        switch self {
        case .text(let string): string.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}

/// What `send` did with a message.
public enum WebSocketSendResult: Sendable, Equatable {
    /// Queued; it will be written in order after everything queued before it.
    case queued
    /// A droppable message that did not fit the send queue; counted, never written.
    case dropped
    /// The connection is closed or closing (possibly because this very message did not fit:
    /// see `WebSocketClose.slowConsumer`); nothing was queued.
    case closed
}
