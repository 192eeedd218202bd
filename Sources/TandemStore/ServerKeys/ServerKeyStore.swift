/// A server-to-server key: a P-256 public key an operator registered for one container, with
/// which a back end signs CloudKit Web Services requests (`X-Apple-CloudKit-Request-KeyID`,
/// `-ISO8601Date`, `-SignatureV1`). Requests it signs act as `userRecordName` (decisions J7).
public struct StoredServerKey: Sendable, Hashable {
    /// 64 lower-case hex digits (256 random bits), as the request's `X-Apple-CloudKit-Request-KeyID`.
    public var keyID: String
    public var container: String
    /// The uncompressed X9.63 point (65 bytes, `0x04 ‖ X ‖ Y`).
    public var publicKey: [UInt8]
    /// The user the key's requests act as.
    public var userRecordName: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    /// Milliseconds since 1970; nil while the key works.
    public var revokedAt: Int64?

    public init(keyID: String, container: String, publicKey: [UInt8], userRecordName: String, createdAt: Int64, revokedAt: Int64? = nil) {
        self.keyID = keyID
        self.container = container
        self.publicKey = publicKey
        self.userRecordName = userRecordName
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// Reads of server-to-server keys.
public protocol ServerKeyReading {
    /// The key with this ID (revoked or not), or nil.
    func serverKey(id: String) throws -> StoredServerKey?
    /// The container's keys, revoked ones included, oldest first.
    func serverKeys(container: String) throws -> [StoredServerKey]
}

/// Writes of server-to-server keys.
public protocol ServerKeyWriting: ServerKeyReading {
    func addServerKey(_ key: StoredServerKey) throws
    /// Revokes a key; false when it was unknown or already revoked.
    func revokeServerKey(id: String, at time: Int64) throws -> Bool
    /// Revokes every key that acts as `user`, in every container (their account is being
    /// deleted; decisions A43); returns how many were working.
    func revokeServerKeys(user: String, at time: Int64) throws -> Int
}
