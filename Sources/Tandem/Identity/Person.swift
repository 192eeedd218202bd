public import Foundation

/// A person in a collaboration, as Shared with You names them (`SWPerson`): a handle to show,
/// and the identity that stands for them in one collaboration.
public struct Person: Sendable, Hashable {
    /// Email address or phone number, shown locally only.
    public var handle: String
    public var identity: Identity
    public var displayName: String?

    public init(handle: String, identity: Identity, displayName: String? = nil) {
        self.handle = handle
        self.identity = identity
        self.displayName = displayName
    }

    /// One person's identity in one collaboration (`SWPerson.Identity`): the root of a Merkle
    /// tree over their device keys (D24). Opaque; equal roots are the same person.
    public struct Identity: Sendable, Hashable {
        /// SHA-256 root hash, 32 bytes.
        public var rootHash: Data
        public init(rootHash: Data) { self.rootHash = rootHash }
    }

    /// Proof that one device key is a leaf of an identity tree (`SWPerson.IdentityProof`).
    public struct IdentityProof: Sendable, Hashable {
        /// Sibling hashes from the leaf up, 32 bytes each.
        public var inclusionHashes: [Data]
        /// The device's uncompressed X9.63 P-256 public key, 65 bytes.
        public var publicKey: Data
        /// The leaf's index in the padded tree.
        public var publicKeyIndex: Int

        public init(inclusionHashes: [Data], publicKey: Data, publicKeyIndex: Int) {
            self.inclusionHashes = inclusionHashes
            self.publicKey = publicKey
            self.publicKeyIndex = publicKeyIndex
        }
    }

    /// An identity proof with the device's signature over data the verifier chose
    /// (`SWPerson.SignedIdentityProof`).
    public struct SignedIdentityProof: Sendable, Hashable {
        public var proof: IdentityProof
        /// ECDSA P-256 / SHA-256 signature, DER encoded.
        public var signatureData: Data

        public init(proof: IdentityProof, signatureData: Data) {
            self.proof = proof
            self.signatureData = signatureData
        }
    }
}

/// Where an identity stands in a custom collaboration, as its owner sees it.
public struct CollaborationIdentity: Sendable, Hashable {
    public enum State: String, Sendable {
        /// Issued to the owner, not yet confirmed by a participants update.
        case issued
        /// Confirmed: the person can prove it.
        case active
        /// Removed: proofs are refused and any binding was revoked.
        case removed
    }

    public var identity: Person.Identity
    public var state: State
    /// The account a verified proof bound the identity to.
    public var boundUserRecordID: Record.ID?

    public init(identity: Person.Identity, state: State, boundUserRecordID: Record.ID? = nil) {
        self.identity = identity
        self.state = state
        self.boundUserRecordID = boundUserRecordID
    }
}
