import Foundation
import TandemCore
public import TandemCrypto
public import TandemStore

/// Identities of people in custom collaborations and the proofs that bind them to accounts
/// (SharedWithYou: `SWPerson.Identity`, `SWPersonIdentityProof`, `SWSignedPersonIdentityProof`,
/// and the server verification of spec §1.8; Tandem's answers in D24 and docs/decisions.md I1–I8).
///
/// The life of an identity:
/// 1. Devices register P-256 public keys (`registerDevice`).
/// 2. When a collaboration is shared with people, its owner is issued one identity per person
///    (`identities`): a Merkle tree over that person's device keys, padded with random keys,
///    fresh for every collaboration (so identities do not link across collaborations).
/// 3. The owner's participants-update action confirms added identities and removes others
///    (`updateParticipants`); only confirmed (`active`) identities can be proven.
/// 4. A recipient's device fetches its inclusion proof (`proof`) and a single-use challenge
///    (`challenge`), signs the challenge and sends both (`verify`): the identity is bound to the
///    caller's account, which the owner then sees (`list`).
public struct IdentityService: Sendable {
    public let store: any Store
    /// Device keys one user may register.
    public static let devicesPerUser = 16
    /// People one call may issue identities for.
    public static let identitiesPerRequest = 200
    /// Challenge lifetime (D24): 5 minutes, in milliseconds.
    public static let challengeLifetime: Int64 = 5 * 60 * 1000

    public init(store: any Store) { self.store = store }

    /// Registers one of the caller's device keys (uncompressed X9.63 P-256, 65 bytes).
    /// Returns false when it was registered already.
    /// - Throws: `BAD_REQUEST` for bytes that are not a P-256 point; `CONFLICT` when another
    ///   account registered the key; `LIMIT_EXCEEDED` past `devicesPerUser`.
    public func registerDevice(publicKey: [UInt8], scope: RequestScope) throws -> Bool {
        guard P256.isValidPublicKey(publicKey) else {
            throw CloudKitError.badRequest("'publicKey' must be an uncompressed P-256 point: 65 bytes starting 0x04, base64")
        }
        let user = scope.user
        return try store.write { tx in
            if let owner = try tx.deviceKeyOwner(publicKey) {
                guard owner == user else { throw CloudKitError(.conflict, "this device key is registered to another account") }
                return false
            }
            guard try tx.deviceKeys(user: user).count < Self.devicesPerUser else {
                throw CloudKitError(.limitExceeded, "an account can register at most \(Self.devicesPerUser) device keys")
            }
            return try tx.addDeviceKey(user: user, publicKey: publicKey, at: Clock.milliseconds())
        }
    }

    /// The caller's registered device keys, oldest first.
    public func devices(scope: RequestScope) throws -> [(publicKey: [UInt8], createdAt: Int64)] {
        try store.read { try $0.deviceKeys(user: scope.user) }
    }

    /// The identity (root hash, 32 bytes) of each of `users` in `collaboration`, issued to the
    /// caller (the collaboration's owner; the first caller becomes it). A person keeps the
    /// identity already issued to them while it is not removed; otherwise a new tree is built
    /// from the devices they have registered now. Keys of the result are user record names.
    /// - Throws: `ACCESS_DENIED` when another user owns the collaboration's identities;
    ///   `NOT_FOUND` for an unknown user; `BAD_REQUEST` for an empty collaboration identifier or
    ///   more than `identitiesPerRequest` people.
    public func identities(collaboration: String, users: [String], scope: RequestScope) throws -> [String: [UInt8]] {
        try Self.check(collaboration: collaboration)
        guard users.count <= Self.identitiesPerRequest else {
            throw CloudKitError.badRequest("at most \(Self.identitiesPerRequest) people per request")
        }
        let (container, environment, owner) = (scope.database.container, scope.database.environment.rawValue, scope.user)
        return try store.write { tx in
            let existing = try tx.identities(container: container, environment: environment, collaboration: collaboration)
            try Self.checkOwner(existing, owner: owner, collaboration: collaboration)
            var result: [String: [UInt8]] = [:]
            let now = Clock.milliseconds()
            for user in users where result[user] == nil {
                guard let account = try tx.user(recordNameOrEmail: user), account.recordName == user else {
                    throw CloudKitError(.notFound, "no user '\(user)'")
                }
                if let current = existing.last(where: { $0.userRecordName == user && $0.state != .removed }) {
                    result[user] = current.rootHash
                    continue
                }
                let tree = IdentityTree(deviceKeys: try tx.deviceKeys(user: user).map(\.publicKey))
                try tx.putIdentity(StoredIdentity(container: container, environment: environment, collaboration: collaboration,
                                                  rootHash: tree.rootHash, userRecordName: user, issuedBy: owner,
                                                  leafKeys: tree.packedLeafKeys, state: .issued, createdAt: now))
                result[user] = tree.rootHash
            }
            return result
        }
    }

    /// The owner's participants-update action (`SWUpdateCollaborationParticipantsAction`):
    /// `added` identities become provable, `removed` ones are refused from now on and lose their
    /// account binding (spec §1.7 step 7: "revoke access of any account bound to that identity").
    /// Returns the collaboration's identities afterwards.
    /// - Throws: `ACCESS_DENIED` when the caller does not own the collaboration; `NOT_FOUND` for
    ///   a root hash never issued in it (nothing is changed then).
    public func updateParticipants(collaboration: String, added: [[UInt8]], removed: [[UInt8]], scope: RequestScope) throws -> [StoredIdentity] {
        try Self.check(collaboration: collaboration)
        let (container, environment, owner) = (scope.database.container, scope.database.environment.rawValue, scope.user)
        return try store.write { tx in
            var identities = try tx.identities(container: container, environment: environment, collaboration: collaboration)
            guard !identities.isEmpty else { throw CloudKitError(.notFound, "no identities were issued in collaboration '\(collaboration)'") }
            try Self.checkOwner(identities, owner: owner, collaboration: collaboration)
            for (hashes, state) in [(added, StoredIdentity.State.active), (removed, .removed)] {
                for hash in hashes {
                    guard let index = identities.firstIndex(where: { $0.rootHash == hash }) else {
                        throw CloudKitError(.notFound, "identity \(Self.base64(hash)) was not issued in collaboration '\(collaboration)'")
                    }
                    identities[index].state = state
                    if state == .removed { identities[index].boundUser = nil; identities[index].boundAt = nil }
                    try tx.putIdentity(identities[index])
                }
            }
            return identities
        }
    }

    /// The collaboration's identities, for its owner: state and the account each is bound to.
    /// - Throws: `ACCESS_DENIED` for anyone but the owner; `NOT_FOUND` when none was issued.
    public func list(collaboration: String, scope: RequestScope) throws -> [StoredIdentity] {
        try Self.check(collaboration: collaboration)
        let identities = try store.read {
            try $0.identities(container: scope.database.container, environment: scope.database.environment.rawValue, collaboration: collaboration)
        }
        guard !identities.isEmpty else { throw CloudKitError(.notFound, "no identities were issued in collaboration '\(collaboration)'") }
        try Self.checkOwner(identities, owner: scope.user, collaboration: collaboration)
        return identities
    }

    /// The inclusion proof of the caller's device key in the caller's identity for
    /// `collaboration` (what the device needs to build `SWPersonIdentityProof`).
    /// - Throws: `NOT_FOUND` when the caller has no identity there that holds this key.
    public func proof(collaboration: String, publicKey: [UInt8], scope: RequestScope) throws -> IdentityProof {
        try Self.check(collaboration: collaboration)
        let identities = try store.read {
            try $0.identities(container: scope.database.container, environment: scope.database.environment.rawValue, collaboration: collaboration)
        }
        for identity in identities.reversed() where identity.userRecordName == scope.user && identity.state != .removed {
            if let proof = IdentityTree(packedLeafKeys: identity.leafKeys)?.proof(for: publicKey) { return proof }
        }
        throw CloudKitError(.notFound, "you have no identity in collaboration '\(collaboration)' that includes this device key")
    }

    /// A single-use challenge (32 random bytes) for the caller to sign, valid for 5 minutes (D24).
    public func challenge(collaboration: String, scope: RequestScope) throws -> IdentityChallenge {
        try Self.check(collaboration: collaboration)
        let now = Clock.milliseconds()
        let challenge = IdentityChallenge(challenge: Digest.randomBytes(32), userRecordName: scope.user,
                                          container: scope.database.container, environment: scope.database.environment.rawValue,
                                          collaboration: collaboration, expiresAt: now + Self.challengeLifetime)
        try store.write { tx in try tx.addIdentityChallenge(challenge, at: now) }
        return challenge
    }

    /// Verifies a signed identity proof over a challenge this server issued to the caller for
    /// `collaboration` and binds the identity to the caller's account (spec §1.8, steps 1–5).
    /// The challenge is spent whatever the outcome. Returns the bound identity.
    /// - Throws: `ACCESS_DENIED` with the reason: challenge unknown, used, expired or issued to
    ///   someone else or for another collaboration; signature invalid; proof malformed; the root
    ///   is not an identity of the collaboration, was removed, or is bound to another account.
    public func verify(collaboration: String, proof: SignedIdentityProof, signedData: [UInt8], scope: RequestScope) throws -> StoredIdentity {
        try Self.check(collaboration: collaboration)
        let (container, environment, user) = (scope.database.container, scope.database.environment.rawValue, scope.user)
        let now = Clock.milliseconds()
        // Spend the challenge in its own transaction, so a refused proof cannot be retried with it.
        let challenge = try store.write { tx -> IdentityChallenge? in
            guard let challenge = try tx.identityChallenge(signedData), try tx.useIdentityChallenge(signedData, at: now) else { return nil }
            return challenge
        }
        guard let challenge else {
            throw CloudKitError(.accessDenied, "the signed data is not a challenge this server issued, or it was already used")
        }
        guard challenge.expiresAt >= now else { throw CloudKitError(.accessDenied, "the challenge expired; ask for a new one") }
        guard challenge.userRecordName == user, challenge.container == container, challenge.environment == environment,
              challenge.collaboration == collaboration else {
            throw CloudKitError(.accessDenied, "the challenge was issued to another account or for another collaboration")
        }
        let root: [UInt8]
        switch proof.verifiedRootHash(signedData: signedData) {
        case .success(let hash): root = hash
        case .failure(.badSignature): throw CloudKitError(.accessDenied, "the signature does not verify with the proof's public key")
        case .failure(.invalidPublicKey): throw CloudKitError(.accessDenied, "the proof's public key is not an uncompressed P-256 point")
        case .failure(.malformedProof): throw CloudKitError(.accessDenied, "the inclusion hashes must be 32 bytes each and the index inside the tree")
        }
        return try store.write { tx in
            let identities = try tx.identities(container: container, environment: environment, collaboration: collaboration)
            guard var identity = identities.first(where: { $0.rootHash == root }) else {
                throw CloudKitError(.accessDenied, "the proof does not lead to an identity of collaboration '\(collaboration)'")
            }
            switch identity.state {
            case .issued: throw CloudKitError(.accessDenied, "this identity was not confirmed by the collaboration's owner yet")
            case .removed: throw CloudKitError(.accessDenied, "this identity was removed from collaboration '\(collaboration)'")
            case .active: break
            }
            if let bound = identity.boundUser {
                guard bound == user else { throw CloudKitError(.accessDenied, "this identity is bound to another account") }
                return identity
            }
            identity.boundUser = user
            identity.boundAt = now
            try tx.putIdentity(identity)
            return identity
        }
    }

    static func check(collaboration: String) throws {
        guard !collaboration.isEmpty, collaboration.utf8.count <= 255 else {
            throw CloudKitError.badRequest("'collaborationIdentifier' must be 1 to 255 bytes")
        }
    }

    static func checkOwner(_ identities: [StoredIdentity], owner: String, collaboration: String) throws {
        if let first = identities.first, first.issuedBy != owner {
            throw CloudKitError(.accessDenied, "collaboration '\(collaboration)' belongs to another user")
        }
    }

    static func base64(_ bytes: [UInt8]) -> String { Data(bytes).base64EncodedString() }
}
