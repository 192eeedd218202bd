/// base64url without padding (RFC 4648 §5), as JWS (RFC 7515 §2) and WebAuthn's JSON use it;
/// strict: only `A–Z a–z 0–9 - _`.
enum Base64URL {
    /// The bytes, or nil when `text` has characters outside the base64url alphabet (or padding).
    static func decode(_ text: Substring) -> [UInt8]? {
        guard text.utf8.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }),
              text.utf8.count % 4 != 1 else { return nil }
        return SyncTokens.bytes(base64URL: String(text))
    }

    static func decode(_ text: String) -> [UInt8]? { decode(Substring(text)) }

    static func encode(_ bytes: [UInt8]) -> String { SyncTokens.base64URL(bytes) }
}
