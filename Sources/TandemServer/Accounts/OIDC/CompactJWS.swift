import TandemCore

/// A JSON Web Signature in compact serialization (RFC 7515 §7.1): `header.payload.signature`,
/// each part base64url without padding; header and payload are JSON objects read through
/// Jansson. Nothing here says the signature is good: `IDTokenVerifier` checks it.
struct CompactJWS: Sendable {
    /// Longest token accepted, in bytes (ID tokens are a few kilobytes).
    static let maximumBytes = 16 * 1024

    var header: JSONObject
    var payload: JSONObject
    /// `header.payload` as sent: the bytes the signature covers.
    var signingInput: [UInt8]
    var signature: [UInt8]

    /// - Throws: `IDTokenError.malformed` when `text` is not three base64url parts whose first two
    ///   are JSON objects, or is longer than `maximumBytes`.
    init(_ text: String) throws(IDTokenError) {
        guard text.utf8.count <= Self.maximumBytes else { throw .malformed("the token is longer than \(Self.maximumBytes) bytes") }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .malformed("a JWT has three parts separated by dots") }
        guard let headerBytes = Base64URL.decode(parts[0]), let payloadBytes = Base64URL.decode(parts[1]),
              let signature = Base64URL.decode(parts[2]) else { throw .malformed("a JWT's parts are base64url without padding") }
        guard case .object(let header)? = try? JSONParser.parse(headerBytes) else { throw .malformed("the JWT header is not a JSON object") }
        guard case .object(let payload)? = try? JSONParser.parse(payloadBytes) else { throw .malformed("the JWT payload is not a JSON object") }
        self.header = header
        self.payload = payload
        self.signature = signature
        signingInput = Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8)
    }
}
