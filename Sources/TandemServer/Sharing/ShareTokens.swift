import TandemCrypto
import Foundation
import TandemStore
import TandemCore

/// Share URL tokens and derived participant IDs.
enum ShareTokens {
    private static let alphabet = Array("0123456789abcdefghjkmnpqrstvwxyz".utf8)

    /// A new URL token: 130 random bits as 26 characters of Crockford-style base32 (lowercase,
    /// no i, l, o, u), safe in a URL path.
    static func makeShortGUID() -> String {
        let bytes = Digest.randomBytes(17)
        var bits = 0
        var value = 0
        var out: [UInt8] = []
        for byte in bytes {
            value = (value << 8) | Int(byte)
            bits += 8
            while bits >= 5 && out.count < 26 {
                bits -= 5
                out.append(alphabet[(value >> bits) & 31])
            }
            value &= (1 << bits) - 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// True for strings `makeShortGUID` could have made (cheap filtering of junk in URLs).
    static func isWellFormed(_ token: String) -> Bool {
        token.utf8.count == 26 && token.utf8.allSatisfy { alphabet.contains($0) }
    }

    /// The owner's participant ID: derived from the share, so it is stable without being stored.
    static func ownerParticipantID(_ share: StoredShare) -> String {
        let hash = Digest.sha256(Array("owner:\(share.zone.key):\(share.shortGUID)".utf8))
        return uuidString(hash)
    }

    /// A fresh participant ID (a UUID string).
    static func makeParticipantID() -> String { UUID.random().uuidString }

    private static func uuidString(_ bytes: [UInt8]) -> String {
        let hex = Digest.hex(Array(bytes.prefix(16))).uppercased()
        let h = Array(hex)
        return String(h[0..<8]) + "-" + String(h[8..<12]) + "-" + String(h[12..<16]) + "-" + String(h[16..<20]) + "-" + String(h[20..<32])
    }
}
