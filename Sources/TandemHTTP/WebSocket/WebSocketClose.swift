/// A close code and reason, as carried by a WebSocket close frame (RFC 6455 section 7.4).
///
/// ```swift
/// connection.close(WebSocketClose(code: 4401, reason: "token expired"))
/// if close.code == WebSocketClose.slowConsumer { resumeFromChangeToken() }
/// ```
///
/// Codes 4000...4999 are for applications; Tandem's stream WebSocket uses HTTP-like ones
/// (4401 unauthenticated, 4403 forbidden). The reason is at most 123 bytes of UTF-8 on the
/// wire; a longer one is cut at a character boundary.
public struct WebSocketClose: Sendable, Equatable, CustomStringConvertible {
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normal = 1000
    /// 1001: the server is shutting down (or the client going away).
    public static let goingAway = 1001
    /// 1002: the peer broke the protocol.
    public static let protocolError = 1002
    /// 1005: the close frame carried no code (never sent, only reported).
    public static let noStatus = 1005
    /// 1006: the connection ended without a close frame (never sent, only reported).
    public static let abnormal = 1006
    /// 1007: a text message was not valid UTF-8.
    public static let invalidPayload = 1007
    /// 1008: a message violated the endpoint's policy.
    public static let policyViolation = 1008
    /// 1009: a message (all its fragments together) exceeded `WebSocketConfiguration.maxMessageBytes`.
    public static let messageTooBig = 1009
    /// 1011: the endpoint hit an unexpected condition.
    public static let internalError = 1011
    /// 4008 (application range, 1008's sibling): the send queue was full and a message that
    /// must not be dropped did not fit, so the peer is not reading fast enough. The peer
    /// reconnects and resumes from what it last saw (DESIGN.md section 3).
    public static let slowConsumer = 4008

    /// The largest reason, in UTF-8 bytes, that fits a close frame (125 minus the code).
    public static let maxReasonBytes = 123

    public var description: String { reason.isEmpty ? "\(code)" : "\(code) \(reason)" }

    /// The reason as sent in a close frame: UTF-8 cut to `maxReasonBytes`, never inside a
    /// character.
    var reasonBytes: [UInt8] {
        var bytes = Array(reason.utf8.prefix(Self.maxReasonBytes))
        if bytes.count < reason.utf8.count {
            // Drop the continuation bytes of a cut character, then its lead byte.
            while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
            if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
        }
        return bytes
    }

    /// Reads a received close frame payload; an empty one means `noStatus`.
    init(payload: UnsafeRawBufferPointer) {
        guard payload.count >= 2 else {
            self.init(code: Self.noStatus)
            return
        }
        let code = Int(payload[0]) << 8 | Int(payload[1])
        self.init(code: code, reason: String(decoding: payload[2...], as: UTF8.self))
    }
}
