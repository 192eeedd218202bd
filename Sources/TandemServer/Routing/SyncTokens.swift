import Foundation
import TandemCore
import TandemStore

/// Opaque, versioned, tamper-evident tokens: zone `syncToken`s and query `continuationMarker`s.
///
/// Layout before base64url: version byte, kind byte, two big-endian Int64 payload values, then
/// the first 16 bytes of HMAC-SHA-256 over the rest under the server's secret
/// (`secret.key` in the data directory). A token that fails the MAC is refused, never guessed at.
struct SyncTokens: Sendable {
    let secret: [UInt8]
    static let version: UInt8 = 1

    enum Kind: UInt8 {
        case zone = 1
        case queryMarker = 2
    }

    func encode(kind: Kind, _ a: Int64, _ b: Int64) -> String {
        var bytes: [UInt8] = [Self.version, kind.rawValue]
        for value in [a, b] { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
        bytes.append(contentsOf: Digest.hmacSHA256(key: secret, message: bytes).prefix(16))
        return Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    func decode(_ text: String, kind: Kind) -> (Int64, Int64)? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard let data = Data(base64Encoded: base64), data.count == 34 else { return nil }
        let bytes = [UInt8](data)
        guard bytes[0] == Self.version, bytes[1] == kind.rawValue else { return nil }
        let mac = Digest.hmacSHA256(key: secret, message: Array(bytes[0..<18])).prefix(16)
        guard Digest.equal(Array(mac), Array(bytes[18...])) else { return nil }
        func int(_ offset: Int) -> Int64 { bytes[offset..<offset + 8].reduce(0) { $0 << 8 | Int64($1) } }
        return (int(2), int(10))
    }

    /// A zone's current `syncToken`.
    func zoneToken(_ zone: StoredZone?) -> String {
        encode(kind: .zone, zone?.key ?? 0, zone?.changeSequence ?? 0)
    }

    func encodeMarker(offset: Int, fingerprint: Int64) -> String {
        encode(kind: .queryMarker, Int64(offset), fingerprint)
    }

    /// The offset a continuation marker stands for.
    /// - Throws: `BAD_REQUEST` when the marker is damaged or belongs to another query.
    func decodeMarker(_ text: String, fingerprint: Int64) throws(CloudKitError) -> Int {
        guard let (offset, print) = decode(text, kind: .queryMarker), offset >= 0, offset < Int64(Int32.max) else {
            throw .badRequest("continuationMarker is not one this server issued")
        }
        guard print == fingerprint else {
            throw .badRequest("continuationMarker belongs to a different query; send the same query with it")
        }
        return Int(offset)
    }
}

enum ContinuationMarker {
    /// A 64-bit digest of what a query asks, so a marker is only accepted with the same query.
    static func fingerprint(query: JSONValue, zone: ZoneID?, zoneWide: Bool) -> Int64 {
        var bytes = JSONWriter.bytes(query)
        bytes.append(contentsOf: Array("\(zone?.zoneName ?? "")|\(zoneWide)".utf8))
        return Digest.sha256(bytes).prefix(8).reduce(0) { $0 << 8 | Int64($1) }
    }
}

/// The server's secret for token MACs: 32 random bytes in `secret.key`, made on first start.
enum ServerSecret {
    static func load(directory: String) throws -> [UInt8] {
        let path = directory + "/secret.key"
        if let data = FileManager.default.contents(atPath: path), data.count == 32 { return [UInt8](data) }
        let secret = Digest.randomBytes(32)
        guard FileManager.default.createFile(atPath: path, contents: Data(secret), attributes: [.posixPermissions: 0o600]) else {
            throw CloudKitError(.internalError, "cannot write \(path)")
        }
        return secret
    }
}
