import TandemCrypto

/// Signs and checks asset download URLs, so a `downloadURL` works without credentials (CloudKit
/// JS apps put it straight into `<img src>` or `fetch`, as Apple's URLs allow).
///
/// A signed URL is `/assets/1/{container}/{environment}/{database}/[{owner}/]{zone}/{record}/{field}/{checksum}`
/// with `?e={expires}&r={reader}&s={signature}`:
/// - scoped to one asset version: the path names the record field and the asset's checksum;
/// - scoped to the reader it was issued to (`r`, the user record name of the caller whose
///   lookup, query or change fetch returned it); the download checks that reader's access again,
///   so a revoked share ends even URLs issued before, and issues no fresh ones;
/// - expiring: `e` is the end of the next whole UTC hour after signing (seconds since 1970), so
///   a URL lives between 1 and 2 hours and stays the same within an hour, which lets browsers
///   cache it;
/// - `s`: the first 16 bytes, hex, of HMAC-SHA-256 over path, reader and expiry under a key
///   derived from the server's secret (`secret.key`).
struct AssetURLSigner: Sendable {
    /// The lifetime step: URLs expire at the end of the next whole period of this many seconds.
    static let periodSeconds: Int64 = 3600
    private let key: [UInt8]

    init(secret: [UInt8]) {
        key = Digest.hmacSHA256(key: secret, message: Array("tandem asset download URL v1".utf8))
    }

    /// When a URL signed at `now` (seconds since 1970) expires.
    static func expiry(now: Int64) -> Int64 { (now / periodSeconds + 2) * periodSeconds }

    /// The signature for the decoded `path`.
    func signature(path: String, reader: String, expires: Int64) -> String {
        let message = Array("\(path)\n\(reader)\n\(expires)".utf8)
        return Digest.hex(Array(Digest.hmacSHA256(key: key, message: message).prefix(16)))
    }

    /// Whether `signature` is the one for these values (compared in constant time).
    func isValid(signature: String, path: String, reader: String, expires: Int64) -> Bool {
        let expected = Array(self.signature(path: path, reader: reader, expires: expires).utf8)
        let given = Array(signature.utf8)
        guard expected.count == given.count else { return false }
        return zip(expected, given).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
