/// Proof that one device key is a leaf of a person's identity tree (D24):
/// SharedWithYou's `SWPerson.IdentityProof`.
public struct IdentityProof: Sendable, Hashable {
    /// Sibling hashes from the leaf up to (not including) the root, 32 bytes each.
    public var inclusionHashes: [[UInt8]]
    /// The device's uncompressed X9.63 P-256 public key (65 bytes).
    public var publicKey: [UInt8]
    /// Index of the device's leaf in the padded tree.
    public var publicKeyIndex: Int

    public init(inclusionHashes: [[UInt8]], publicKey: [UInt8], publicKeyIndex: Int) {
        self.inclusionHashes = inclusionHashes
        self.publicKey = publicKey
        self.publicKeyIndex = publicKeyIndex
    }

    /// The root hash the proof leads to: `h = SHA-256(publicKey)`, then for each inclusion hash
    /// `s`, `h = SHA-256(h ‖ s)` when the index is even, else `SHA-256(s ‖ h)`, halving the index
    /// (spec §1.8, "Server verification algorithm", step 4). Nil when a hash is not 32 bytes or the
    /// index does not fit the number of levels.
    public var rootHash: [UInt8]? {
        guard publicKeyIndex >= 0, inclusionHashes.count < Int.bitWidth - 1,
              publicKeyIndex < 1 << inclusionHashes.count,
              inclusionHashes.allSatisfy({ $0.count == 32 }) else { return nil }
        var hash = Digest.sha256(publicKey)
        var index = publicKeyIndex
        for sibling in inclusionHashes {
            hash = index % 2 == 0 ? Digest.sha256(hash + sibling) : Digest.sha256(sibling + hash)
            index /= 2
        }
        return hash
    }
}

/// An identity proof with the device's signature over data the verifier chose (a challenge):
/// SharedWithYou's `SWPerson.SignedIdentityProof`.
public struct SignedIdentityProof: Sendable, Hashable {
    public var proof: IdentityProof
    /// ECDSA P-256 / SHA-256 signature, DER encoded, over the signed data.
    public var signatureData: [UInt8]

    public init(proof: IdentityProof, signatureData: [UInt8]) {
        self.proof = proof
        self.signatureData = signatureData
    }

    /// Signs `data` with `key` and attaches the signature to `proof`.
    /// - Throws: `P256Error` when libcrypto fails.
    public init(proof: IdentityProof, signing data: [UInt8], with key: P256.PrivateKey) throws(P256Error) {
        self.proof = proof
        signatureData = try key.signature(for: data)
    }

    /// The root hash this proof establishes for `signedData`, or why not: the signature must be
    /// valid for the proof's public key and the inclusion hashes must lead to a root. Whether that
    /// root belongs to someone is the caller's question.
    public func verifiedRootHash(signedData: [UInt8]) -> Result<[UInt8], IdentityProofFailure> {
        let valid: Bool
        do { valid = try P256.isValidSignature(signatureData, of: signedData, publicKey: proof.publicKey) } catch { return .failure(.invalidPublicKey) }
        guard valid else { return .failure(.badSignature) }
        guard let root = proof.rootHash else { return .failure(.malformedProof) }
        return .success(root)
    }
}

/// Why a signed identity proof does not establish an identity.
public enum IdentityProofFailure: Error, Sendable, Equatable {
    /// The public key is not a 65-byte uncompressed P-256 point.
    case invalidPublicKey
    /// The signature does not verify over the signed data with the proof's key.
    case badSignature
    /// Inclusion hashes of the wrong size, or an index outside the tree.
    case malformedProof
}
