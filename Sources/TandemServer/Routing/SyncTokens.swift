import TandemCrypto
import Foundation
import TandemCore
import TandemStore

/// Opaque, versioned, tamper-evident tokens: zone and database `syncToken`s and query
/// `continuationMarker`s.
///
/// Layout before base64url: version byte (3), kind byte, count byte, `count` big-endian Int64
/// values of which the first is the store's generation (decisions P78), then the first 16 bytes
/// of HMAC-SHA-256 over the rest under the server's secret (`secret.key` in the data directory).
/// Version 2 tokens (no generation) and version 1 tokens (two values, no count byte) are still
/// read, as tokens of no particular generation. A token that fails the MAC is refused, never
/// guessed at. Query cursors (kind 4) carry bytes instead of values: version (2), kind, the
/// query fingerprint (8 bytes), the store's ``QueryCursor`` bytes, then the MAC.
struct SyncTokens: Sendable {
    let secret: [UInt8]
    /// The version of tokens over bytes (query cursors).
    static let version: UInt8 = 2
    /// The version of tokens over values (zone and database tokens), since they carry the
    /// store's generation.
    static let valuesVersion: UInt8 = 3

    /// A decoded zone or database token.
    struct Values {
        /// The generation of the store that issued it; nil for a token from before generations.
        var generation: Int64?
        var values: [Int64]
    }

    enum Kind: UInt8 {
        /// Zone key, zone sequence, viewer tag, share-set tag, and (pages of a listing without a
        /// token) the zone sequence the listing began at.
        case zone = 1
        /// Offset, query fingerprint (before keyset paging; no longer accepted).
        case queryMarker = 2
        /// Database-feed owner tag, feed clock.
        case database = 3
        /// Query fingerprint, then a ``QueryCursor`` (keyset paging, issue 14).
        case queryCursor = 4
    }

    /// A token of `kind` over raw `payload` bytes.
    func encode(kind: Kind, payload: [UInt8]) -> String {
        var bytes: [UInt8] = [Self.version, kind.rawValue]
        bytes += payload
        bytes.append(contentsOf: Digest.hmacSHA256(key: secret, message: bytes).prefix(16))
        return Self.base64URL(bytes)
    }

    /// The payload of a token of `kind` made by ``encode(kind:payload:)``, or nil when it is
    /// damaged, forged or of another kind. `maxLength` bounds the text before any work.
    func decode(_ text: String, kind: Kind, payloadOf maxLength: Int) -> [UInt8]? {
        guard text.utf8.count <= maxLength, let bytes = Self.bytes(base64URL: text), bytes.count >= 18,
              bytes[0] == Self.version, bytes[1] == kind.rawValue else { return nil }
        let end = bytes.count - 16
        let mac = Digest.hmacSHA256(key: secret, message: Array(bytes[0..<end])).prefix(16)
        guard Digest.equal(Array(mac), Array(bytes[end...])) else { return nil }
        return Array(bytes[2..<end])
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        // Base64's alphabet turned into base64url's byte by byte, padding dropped (RFC 4648 §5):
        // Foundation's string replacing cost more than the token's MAC.
        var text: [UInt8] = []
        for byte in Data(bytes).base64EncodedData() {
            switch byte {
            case UInt8(ascii: "+"): text.append(UInt8(ascii: "-"))
            case UInt8(ascii: "/"): text.append(UInt8(ascii: "_"))
            case UInt8(ascii: "="): continue
            default: text.append(byte)
            }
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func bytes(base64URL text: String) -> [UInt8]? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        return Data(base64Encoded: base64).map { [UInt8]($0) }
    }

    /// A token of `kind` over `values`, issued by a store of `generation`.
    func encode(kind: Kind, generation: Int64, _ values: Int64...) -> String {
        encode(kind: kind, generation: generation, values)
    }

    func encode(kind: Kind, generation: Int64, _ values: [Int64]) -> String {
        var bytes: [UInt8] = [Self.valuesVersion, kind.rawValue, UInt8(values.count + 1)]
        for value in [generation] + values { withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) } }
        bytes.append(contentsOf: Digest.hmacSHA256(key: secret, message: bytes).prefix(16))
        return Self.base64URL(bytes)
    }

    /// The values of a token of `kind`, or nil when it is damaged, forged or of another kind.
    func decode(_ text: String, kind: Kind) -> Values? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64.append("=") }
        guard text.utf8.count < 512, let data = Data(base64Encoded: base64), data.count >= 2 else { return nil }
        let bytes = [UInt8](data)
        let (header, count): (Int, Int)
        switch bytes[0] {
        case 1: (header, count) = (2, 2)
        case 2 where bytes.count > 2, 3 where bytes.count > 2 && bytes[2] > 0: (header, count) = (3, Int(bytes[2]))
        default: return nil
        }
        let end = header + 8 * count
        guard bytes[1] == kind.rawValue, bytes.count == end + 16 else { return nil }
        let mac = Digest.hmacSHA256(key: secret, message: Array(bytes[0..<end])).prefix(16)
        guard Digest.equal(Array(mac), Array(bytes[end...])) else { return nil }
        let values = (0..<count).map { index in
            bytes[(header + 8 * index)..<(header + 8 * index + 8)].reduce(0) { $0 << 8 | Int64($1) }
        }
        return bytes[0] == Self.valuesVersion ? Values(generation: values[0], values: Array(values.dropFirst())) : Values(values: values)
    }

    /// A zone's `syncToken` for a viewer: `viewer` and `shares` are FeedTags of the caller and
    /// of the shares they read the zone through (0 for the owner).
    /// `generation` is the store's now (``TandemStore/FeedReading/generation(accepting:)``).
    func zoneToken(_ zone: StoredZone?, generation: Int64, sequence: Int64? = nil, viewer: Int64 = 0, shares: Int64 = 0,
                   listingStart: Int64 = 0) -> String {
        let position = sequence ?? zone?.changeSequence ?? 0
        if listingStart > 0 { return encode(kind: .zone, generation: generation, zone?.key ?? 0, position, viewer, shares, listingStart) }
        return encode(kind: .zone, generation: generation, zone?.key ?? 0, position, viewer, shares)
    }

    /// A query's `continuationMarker`: the cursor after the page's last record, bound to the query.
    ///
    /// The cursor holds that record's sort key values, so a marker is as long as they are
    /// (a sort on a long STRING field makes a long marker; a record's fields are at most 1 MiB,
    /// so a marker always fits in a request body).
    func encodeMarker(_ cursor: QueryCursor, fingerprint: Int64) -> String {
        var payload: [UInt8] = []
        withUnsafeBytes(of: fingerprint.bigEndian) { payload.append(contentsOf: $0) }
        return encode(kind: .queryCursor, payload: payload + cursor.bytes)
    }

    /// The cursor a continuation marker stands for.
    /// - Throws: `BAD_REQUEST` when the marker is damaged, from an older server (offset
    ///   markers), or belongs to another query.
    func decodeMarker(_ text: String, fingerprint: Int64) throws(CloudKitError) -> QueryCursor {
        if decode(text, kind: .queryMarker) != nil {
            throw .badRequest("continuationMarker comes from an older version of this server; run the query again from the start")
        }
        guard let payload = decode(text, kind: .queryCursor, payloadOf: Limits.jsonBodyBytes), payload.count >= 8,
              let cursor = QueryCursor(bytes: Array(payload[8...])) else {
            throw .badRequest("continuationMarker is not one this server issued")
        }
        guard payload[0..<8].reduce(0, { $0 << 8 | Int64($1) }) == fingerprint else {
            throw .badRequest("continuationMarker belongs to a different query; send the same query with it")
        }
        return cursor
    }
}

/// 64-bit digests that bind tokens to their viewer and database (not secret: the MAC protects them).
enum FeedTags {
    static func hash(_ text: String) -> Int64 {
        Digest.sha256(Array(text.utf8)).prefix(8).reduce(0) { $0 << 8 | Int64($1) }
    }

    /// The viewer of a zone feed.
    static func viewer(_ user: String) -> Int64 { hash("viewer:" + user) }

    /// The set of shares a participant reads a zone through; 0 for the owner (every record).
    static func shares(_ keys: [Int64]?) -> Int64 {
        guard let keys else { return 0 }
        return hash("shares:" + keys.sorted().map(String.init).joined(separator: ","))
    }

    /// A database feed: viewer, container, environment, scope.
    static func database(_ owner: FeedOwner) -> Int64 {
        hash("database:\(owner.viewer)|\(owner.container)|\(owner.environment.rawValue)|\(owner.scope.rawValue)")
    }
}

enum ContinuationMarker {
    /// A 64-bit digest of what a query asks, so a marker is only accepted with the same query.
    ///
    /// It digests the decoded query, not the request's JSON: the same query with its keys in
    /// another order, a default written out (`"ascending": true`) or the default zone named
    /// (`_defaultZone`) is the same query. The decoded query is written back as a query
    /// dictionary (`QueryCodec.encodeQuery`, its members in a fixed order), so markers survive
    /// restarts and other nodes. Before E25 the digest was of the query's reflection
    /// (`String(reflecting:)`, 12% of a list's instructions); markers minted then are "a
    /// different query" to a server since.
    static func fingerprint(query: Query, zone: ZoneID?, zoneWide: Bool) -> Int64 {
        let zoneName = zone?.zoneName ?? (zoneWide ? "" : ZoneID.defaultZoneName)
        var bytes = JSONWriter.bytes(QueryCodec.encodeQuery(query))
        bytes += Array("|\(zoneName)|\(zoneWide)".utf8)
        return Digest.sha256(bytes).prefix(8).reduce(0) { $0 << 8 | Int64($1) }
    }
}

/// The server's secret for token MACs: 32 random bytes in `secret.key`, made on first start.
///
/// Several nodes share one key (docs/deployment.md), often through a symbolic link: a link is
/// followed and the key made at its target, never replaced by a file of this node's own. A key
/// is written aside and linked into place, so a node starting at the same moment reads the
/// whole key or none and the first one made wins. A file of another length is an error, not
/// replaced: it may be a shared key mangled in copying, and replacing it would void every
/// token and signed URL made with it (N61).
enum ServerSecret {
    static func load(directory: String) throws -> [UInt8] {
        let path = directory + "/secret.key"
        let target = linkTarget(path)
        if let key = try read(target) { return key }
        let secret = Digest.randomBytes(32)
        let aside = target + ".\(getpid()).new"
        guard FileManager.default.createFile(atPath: aside, contents: Data(secret), attributes: [.posixPermissions: 0o600]) else {
            throw CloudKitError(.internalError, "cannot write \(aside) (does its folder exist, and may this user write there?)")
        }
        defer { unlink(aside) }
        if link(aside, target) != 0 {
            let code = errno
            if code == EEXIST, let key = try read(target) { return key }
            throw CloudKitError(.internalError, "cannot write \(target): \(String(cString: strerror(code)))")
        }
        return secret
    }

    /// The key at `path`, nil when there is no file; throws for a file that is not a key.
    private static func read(_ path: String) throws -> [UInt8]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard data.count == 32 else {
            throw CloudKitError(.internalError, "\(path) holds \(data.count) bytes, not a 32-byte key; it is not replaced, "
                                + "since it signs change tokens and URLs: restore it, or remove it to make a new one")
        }
        return [UInt8](data)
    }

    /// The file `path` names once symbolic links are followed (a chain of at most 8; relative
    /// targets from the link's folder): `path` itself when it is no link.
    private static func linkTarget(_ path: String) -> String {
        var current = path
        for _ in 0..<8 {
            guard let destination = try? FileManager.default.destinationOfSymbolicLink(atPath: current) else { return current }
            let folder = (current as NSString).deletingLastPathComponent
            current = destination.hasPrefix("/") ? destination : folder + "/" + destination
        }
        return current
    }
}
