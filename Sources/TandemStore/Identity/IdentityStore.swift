/// A person's identity for one collaboration, as stored: the Merkle tree over their device keys
/// (D24), who it was issued to, and the account it was bound to after a verified proof.
public struct StoredIdentity: Sendable, Hashable {
    /// Where the identity stands in the collaboration's participants-update action.
    public enum State: String, Sendable {
        /// Computed and handed to the collaboration's owner; not yet confirmed.
        case issued
        /// The owner fulfilled the participants update with it: proofs may bind it.
        case active
        /// Removed by a participants update: proofs are refused, any binding is revoked.
        case removed
    }

    public var container: String
    public var environment: String
    /// The app's collaboration identifier (`SWCollaborationIdentifier`).
    public var collaboration: String
    /// SHA-256 root of the tree (32 bytes): `SWPerson.Identity.rootHash`.
    public var rootHash: [UInt8]
    /// The person whose device keys are the tree's real leaves.
    public var userRecordName: String
    /// The user the identity was issued to (the collaboration's owner).
    public var issuedBy: String
    /// The tree's leaf keys in order, 65 bytes each (device keys and padding).
    public var leafKeys: [UInt8]
    public var state: State
    /// The account a verified proof bound the identity to.
    public var boundUser: String?
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var boundAt: Int64?

    public init(container: String, environment: String, collaboration: String, rootHash: [UInt8], userRecordName: String,
                issuedBy: String, leafKeys: [UInt8], state: State, boundUser: String? = nil, createdAt: Int64, boundAt: Int64? = nil) {
        self.container = container
        self.environment = environment
        self.collaboration = collaboration
        self.rootHash = rootHash
        self.userRecordName = userRecordName
        self.issuedBy = issuedBy
        self.leafKeys = leafKeys
        self.state = state
        self.boundUser = boundUser
        self.createdAt = createdAt
        self.boundAt = boundAt
    }
}

/// A single-use challenge a device signs to prove an identity (D24: expires after 5 minutes).
public struct IdentityChallenge: Sendable, Hashable {
    public var challenge: [UInt8]
    public var userRecordName: String
    public var container: String
    public var environment: String
    public var collaboration: String
    public var expiresAt: Int64
    public var usedAt: Int64?

    public init(challenge: [UInt8], userRecordName: String, container: String, environment: String, collaboration: String,
                expiresAt: Int64, usedAt: Int64? = nil) {
        self.challenge = challenge
        self.userRecordName = userRecordName
        self.container = container
        self.environment = environment
        self.collaboration = collaboration
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// Reads of device keys, collaboration identities and challenges.
public protocol IdentityReading {
    /// The user's registered device keys (65-byte X9.63), oldest first.
    func deviceKeys(user: String) throws -> [(publicKey: [UInt8], createdAt: Int64)]
    /// The user a device key is registered to, if any.
    func deviceKeyOwner(_ publicKey: [UInt8]) throws -> String?
    /// Every identity of a collaboration, oldest first.
    func identities(container: String, environment: String, collaboration: String) throws -> [StoredIdentity]
    func identityChallenge(_ challenge: [UInt8]) throws -> IdentityChallenge?
}

/// Writes of device keys, collaboration identities and challenges, inside a transaction.
public protocol IdentityWriting: IdentityReading {
    /// Registers a device key; false when it was already registered (to anyone: check
    /// `deviceKeyOwner` first).
    func addDeviceKey(user: String, publicKey: [UInt8], at time: Int64) throws -> Bool
    /// Inserts an identity, or replaces the one with the same collaboration and root hash.
    func putIdentity(_ identity: StoredIdentity) throws
    /// Stores a challenge, forgetting challenges that expired before `time`.
    func addIdentityChallenge(_ challenge: IdentityChallenge, at time: Int64) throws
    /// Marks a challenge used; false when it was unknown or already used.
    func useIdentityChallenge(_ challenge: [UInt8], at time: Int64) throws -> Bool
}
