/// Why an `HTTPServer` could not start, or stopped on its own (`HTTPServer.failure`).
///
/// ```swift
/// do { try server.start() } catch let error as HTTPServerError where error.code == .bindFailed { ... }
/// ```
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Equatable {
        /// The address could not be bound (port in use, address not local, no permission).
        case bindFailed
        /// libwebsockets refused to create its context.
        case contextCreationFailed
        /// A configuration value is out of range.
        case invalidConfiguration
        /// `start()` was called twice, or after `shutdown()`.
        case invalidState
        /// The listening socket was closed, replaced or stopped listening while serving (the
        /// listener watchdog; `HTTPServer.failure`).
        case listenerLost
        /// libwebsockets' service call failed while serving. No longer raised: the server runs on
        /// a libev loop, whose turns do not fail (decisions E33); kept for source compatibility.
        case serviceFailed
    }

    public var code: Code
    /// A human-readable explanation.
    public var reason: String
    /// The address involved, `host:port`, when there is one.
    public var address: String?

    public init(code: Code, reason: String, address: String? = nil) {
        self.code = code
        self.reason = reason
        self.address = address
    }

    public var description: String {
        if let address {
            return "HTTPServerError.\(code): \(reason) (\(address))"
        }
        return "HTTPServerError.\(code): \(reason)"
    }
}
