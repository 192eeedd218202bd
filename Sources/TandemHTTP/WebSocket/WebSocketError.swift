/// Why a `WebSocketClient` could not connect.
///
/// ```swift
/// do { client = try await WebSocketClient.connect(to: url) }
/// catch where error.code == .connectFailed { retryLater() }
/// ```
public struct WebSocketError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// Not a `ws://host[:port]/path[?query]` URL.
        case invalidURL
        /// `wss://` (TLS) is not offered by this client.
        case unsupported
        /// The TCP connection or the handshake failed: refused, timed out, or the server
        /// answered something other than 101 (lws' reason is in `reason`).
        case connectFailed
        /// libwebsockets could not create the client context.
        case contextCreationFailed
        /// The process's WebSocket client service loop has stopped (libwebsockets failed); no
        /// connection can be made or kept in this process any more (`WebSocketClient`).
        case clientStopped
    }

    public var code: Code
    /// A human-readable explanation.
    public var reason: String
    /// The URL involved.
    public var url: String?

    public init(code: Code, reason: String, url: String? = nil) {
        self.code = code
        self.reason = reason
        self.url = url
    }

    public var description: String {
        url.map { "WebSocketError.\(code): \(reason) (\($0))" } ?? "WebSocketError.\(code): \(reason)"
    }
}
