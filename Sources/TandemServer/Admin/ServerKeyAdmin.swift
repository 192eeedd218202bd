import Foundation
import TandemCore
import TandemCrypto
public import TandemStore

/// `tandem key add|list|revoke`: server-to-server keys (decisions J7).
public enum ServerKeyAdmin {
    /// Registers the P-256 public key in `pem` (as `openssl ec -in key.pem -pubout` writes it:
    /// `-----BEGIN PUBLIC KEY-----`, an uncompressed point) for `container`, acting as `user`.
    /// Returns the new key ID (64 hex digits) for the `X-Apple-CloudKit-Request-KeyID` header.
    /// - Throws: `NOT_FOUND` for an unknown container or user, `BAD_REQUEST` when `pem` is not a
    ///   P-256 public key.
    public static func add(container: String, user: String, pem: String, store: any Store) throws -> String {
        guard let point = publicKey(pem: pem) else {
            throw CloudKitError.badRequest("not a P-256 public key in PEM: make one with 'openssl ecparam -name prime256v1 -genkey -noout -out key.pem' and 'openssl ec -in key.pem -pubout -out pub.pem'")
        }
        guard try store.read({ try $0.containerExists(container) }) else { throw CloudKitError(.notFound, "no container '\(container)'") }
        guard let account = try store.read({ try $0.user(recordNameOrEmail: user) }) else {
            throw CloudKitError(.notFound, "no user '\(user)'")
        }
        let key = StoredServerKey(keyID: Digest.hex(Digest.randomBytes(32)), container: container, publicKey: point,
                                  userRecordName: account.recordName, createdAt: Clock.milliseconds())
        try store.write { try $0.addServerKey(key) }
        return key.keyID
    }

    /// The container's keys, revoked ones included, oldest first.
    /// - Throws: `NOT_FOUND` for an unknown container (as `add` and `tandem app list`: an error,
    ///   not an empty list; decisions F43).
    public static func list(container: String, store: any Store) throws -> [StoredServerKey] {
        try store.read { reader in
            guard try reader.containerExists(container) else { throw CloudKitError(.notFound, "no container '\(container)'") }
            return try reader.serverKeys(container: container)
        }
    }

    /// Revokes a key: requests signed with it are refused from the next one on.
    /// - Throws: `NOT_FOUND` when no unrevoked key has this ID.
    public static func revoke(_ keyID: String, store: any Store) throws {
        let now = Clock.milliseconds()
        guard try store.write({ try $0.revokeServerKey(id: keyID, at: now) }) else {
            throw CloudKitError(.notFound, "no unrevoked server-to-server key '\(keyID)'")
        }
    }

    /// The uncompressed point of a PEM `PUBLIC KEY` holding a P-256 key, or nil.
    static func publicKey(pem: String) -> [UInt8]? {
        let lines = pem.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
        guard let begin = lines.firstIndex(of: "-----BEGIN PUBLIC KEY-----"),
              let end = lines.firstIndex(of: "-----END PUBLIC KEY-----"), begin < end,
              let der = Data(base64Encoded: lines[(begin + 1)..<end].joined()) else { return nil }
        return P256.publicKey(subjectPublicKeyInfo: [UInt8](der))
    }
}
