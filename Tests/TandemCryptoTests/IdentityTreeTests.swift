import Testing
@testable import TandemCrypto

/// D24: identity trees over device keys, inclusion proofs, and the verifier's walk to the root.
struct IdentityTreeTests {
    static let sizes: [(devices: Int, leaves: Int)] = [(1, 4), (3, 4), (4, 4), (5, 8), (8, 8), (9, 16)]

    @Test("Padded to the next power of two, at least 4; every device's proof leads to the root", arguments: sizes)
    func everyDeviceProves(devices: Int, leaves: Int) throws {
        let keys = try (0..<devices).map { _ in try P256.PrivateKey().publicKey }
        let tree = IdentityTree(deviceKeys: keys)
        #expect(tree.leafKeys.count == leaves)
        #expect(Set(keys).isSubset(of: Set(tree.leafKeys)))
        for key in keys {
            let proof = try #require(tree.proof(for: key))
            #expect(proof.inclusionHashes.count == leaves.trailingZeroBitCount)
            #expect(proof.rootHash == tree.rootHash)
        }
    }

    @Test("The worked example's walk: leaf index 2 of 4 hashes (sibling, then left subtree)")
    func walkByHand() throws {
        let keys = try (0..<4).map { _ in try P256.PrivateKey().publicKey }
        let tree = IdentityTree(leafKeys: keys)
        let h = keys.map(Digest.sha256)
        let left = Digest.sha256(h[0] + h[1]), right = Digest.sha256(h[2] + h[3])
        #expect(tree.rootHash == Digest.sha256(left + right))
        let proof = try #require(tree.proof(for: keys[2]))
        #expect(proof.publicKeyIndex == 2)
        #expect(proof.inclusionHashes == [h[3], left])
    }

    @Test("Two trees of the same devices share no root (padding is fresh per tree)")
    func treesAreUnlinkable() throws {
        let keys = [try P256.PrivateKey().publicKey]
        #expect(IdentityTree(deviceKeys: keys).rootHash != IdentityTree(deviceKeys: keys).rootHash)
    }

    @Test("Stored leaves give back the same tree")
    func packedRoundTrip() throws {
        let tree = IdentityTree(deviceKeys: [try P256.PrivateKey().publicKey])
        let copy = try #require(IdentityTree(packedLeafKeys: tree.packedLeafKeys))
        #expect(copy.rootHash == tree.rootHash)
        #expect(IdentityTree(packedLeafKeys: Array(tree.packedLeafKeys.dropLast())) == nil)
        #expect(IdentityTree(packedLeafKeys: Array(tree.packedLeafKeys.prefix(65 * 3))) == nil)
    }

    @Test("A key that is not a leaf has no proof")
    func strangerHasNoProof() throws {
        let tree = IdentityTree(deviceKeys: [try P256.PrivateKey().publicKey])
        #expect(tree.proof(for: try P256.PrivateKey().publicKey) == nil)
    }
}

/// Signed proofs: what the server accepts and why it refuses.
struct SignedIdentityProofTests {
    struct Device {
        let key: P256.PrivateKey
        let tree: IdentityTree
        let proof: IdentityProof
        init() throws {
            key = try P256.PrivateKey()
            tree = IdentityTree(deviceKeys: [key.publicKey, try P256.PrivateKey().publicKey])
            proof = tree.proof(for: key.publicKey)!
        }
    }

    @Test("A signature over the challenge with the leaf's key gives the tree's root")
    func accepted() throws {
        let device = try Device()
        let challenge = Digest.randomBytes(32)
        let signed = try SignedIdentityProof(proof: device.proof, signing: challenge, with: device.key)
        #expect(signed.verifiedRootHash(signedData: challenge) == .success(device.tree.rootHash))
    }

    enum Forgery: String, CaseIterable {
        case otherData, otherKeySigned, flippedSignatureBit, truncatedSignature, emptySignature, wrongIndex,
             shortHash, indexOutOfTree, notAPoint, compressedKey
    }

    @Test("Forged, altered or malformed proofs are refused", arguments: Forgery.allCases)
    func refused(_ forgery: Forgery) throws {
        let device = try Device()
        let challenge = Digest.randomBytes(32)
        var signed = try SignedIdentityProof(proof: device.proof, signing: challenge, with: device.key)
        var data = challenge
        let expected: IdentityProofFailure?
        switch forgery {
        case .otherData:
            data = Digest.randomBytes(32); expected = .badSignature
        case .otherKeySigned:
            signed.signatureData = try P256.PrivateKey().signature(for: challenge); expected = .badSignature
        case .flippedSignatureBit:
            signed.signatureData[signed.signatureData.count - 3] ^= 0x01; expected = .badSignature
        case .truncatedSignature:
            signed.signatureData.removeLast(); expected = .badSignature
        case .emptySignature:
            signed.signatureData = []; expected = .badSignature
        case .wrongIndex:
            signed.proof.publicKeyIndex ^= 1; expected = nil
        case .shortHash:
            signed.proof.inclusionHashes[0].removeLast(); expected = .malformedProof
        case .indexOutOfTree:
            signed.proof.publicKeyIndex = 4; expected = .malformedProof
        case .notAPoint:
            signed.proof.publicKey = [0x04] + [UInt8](repeating: 7, count: 64); expected = .invalidPublicKey
        case .compressedKey:
            signed.proof.publicKey = [0x02] + Array(device.key.publicKey[1..<33]); expected = .invalidPublicKey
        }
        let result = signed.verifiedRootHash(signedData: data)
        if let expected {
            #expect(result == .failure(expected))
        } else {
            // A valid signature with a wrong walk: a root, but not this person's.
            #expect(result != .success(device.tree.rootHash))
        }
    }
}
