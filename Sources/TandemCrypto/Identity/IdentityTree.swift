/// A person's identity as a Merkle tree over their device keys (D24; spec §1.8):
/// leaf = SHA-256 of a device's uncompressed X9.63 P-256 public key; the leaves are padded with
/// random keys to the next power of two, at least 4, so no node is ever alone and the number of
/// devices is hidden; interior node = SHA-256(left ‖ right); the root is the identity
/// (`SWPerson.Identity.rootHash`).
public struct IdentityTree: Sendable, Hashable {
    /// Smallest number of leaves (D24).
    public static let minimumLeaves = 4

    /// Every leaf key in tree order, device keys and padding alike (65 bytes each).
    public let leafKeys: [[UInt8]]
    /// Levels of hashes, leaves first, root last (one element).
    private let levels: [[[UInt8]]]

    /// The tree of `deviceKeys`, padded with fresh random keys and shuffled, so two trees of the
    /// same devices (two collaborations) share no root and no position.
    public init(deviceKeys: [[UInt8]]) {
        var leaves = deviceKeys
        var size = Self.minimumLeaves
        while size < leaves.count { size *= 2 }
        while leaves.count < size { leaves.append([0x04] + Digest.randomBytes(P256.publicKeyLength - 1)) }
        var generator = SecureRandom()
        leaves.shuffle(using: &generator)
        self.init(leafKeys: leaves)
    }

    /// The tree of exactly `leafKeys` in this order (as stored). The count must be a power of
    /// two, at least 4.
    public init(leafKeys: [[UInt8]]) {
        precondition(leafKeys.count >= Self.minimumLeaves && leafKeys.count & (leafKeys.count - 1) == 0,
                     "an identity tree has a power-of-two number of leaves, at least 4")
        self.leafKeys = leafKeys
        var levels = [leafKeys.map(Digest.sha256)]
        while let last = levels.last, last.count > 1 {
            levels.append(stride(from: 0, to: last.count, by: 2).map { Digest.sha256(last[$0] + last[$0 + 1]) })
        }
        self.levels = levels
    }

    /// The identity: the root hash (32 bytes).
    public var rootHash: [UInt8] { levels[levels.count - 1][0] }

    /// The inclusion proof of `publicKey`, or nil when it is not a leaf of this tree.
    public func proof(for publicKey: [UInt8]) -> IdentityProof? {
        guard let index = leafKeys.firstIndex(of: publicKey) else { return nil }
        var hashes: [[UInt8]] = []
        var position = index
        for level in levels.dropLast() {
            hashes.append(level[position ^ 1])
            position /= 2
        }
        return IdentityProof(inclusionHashes: hashes, publicKey: publicKey, publicKeyIndex: index)
    }

    /// The leaf keys as one byte string (65 bytes per leaf), for storage.
    public var packedLeafKeys: [UInt8] { leafKeys.flatMap { $0 } }

    /// A tree from `packedLeafKeys`; nil when the bytes do not split into a valid tree.
    public init?(packedLeafKeys bytes: [UInt8]) {
        let size = P256.publicKeyLength
        guard bytes.count % size == 0 else { return nil }
        let count = bytes.count / size
        guard count >= Self.minimumLeaves, count & (count - 1) == 0 else { return nil }
        self.init(leafKeys: (0..<count).map { Array(bytes[$0 * size..<($0 + 1) * size]) })
    }
}

/// Random numbers from libcrypto, for shuffling leaves.
struct SecureRandom: RandomNumberGenerator {
    mutating func next() -> UInt64 {
        Digest.randomBytes(8).reduce(0) { $0 << 8 | UInt64($1) }
    }
}
