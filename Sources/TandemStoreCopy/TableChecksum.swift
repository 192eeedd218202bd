internal import TandemCrypto

/// A table's row count and checksum, computed the same way on both sides (decisions P41).
///
/// Each row is encoded canonically (its values in the table's column order, by name), hashed
/// with SHA-256, and the hashes are added as 256-bit numbers (mod 2^256): a multiset digest,
/// so the order rows are read in does not matter (tables without a primary key, and text that
/// one side orders by a case-insensitive collation, have no order both sides share). A value
/// is a tag byte then its payload: NULL `0`; integer `1` and 8 bytes big-endian; real `2` and
/// the IEEE 754 bit pattern, 8 bytes big-endian (`-0.0` differs from `0.0`); text `3`, the
/// UTF-8 length (8 bytes) and bytes; bytes `4`, the length and bytes. Values are normalised
/// to their column's kind first (``CopyValue/normalised(to:)``): a BLOB column's text counts
/// as its UTF-8 bytes, a full-text body as its sorted distinct tokens.
struct TableChecksum: Equatable, Sendable {
    private(set) var rows = 0
    private var sum: [UInt64] = [0, 0, 0, 0]   // most significant first

    mutating func add(_ row: [CopyValue]) {
        var encoded: [UInt8] = []
        encoded.reserveCapacity(64)
        for value in row { Self.encode(value, into: &encoded) }
        let digest = Digest.sha256(encoded)
        var carry: UInt64 = 0
        for word in (0..<4).reversed() {
            var part: UInt64 = 0
            for byte in digest[(word * 8)..<(word * 8 + 8)] { part = part << 8 | UInt64(byte) }
            let (partial, overflow1) = sum[word].addingReportingOverflow(part)
            let (total, overflow2) = partial.addingReportingOverflow(carry)
            sum[word] = total
            carry = (overflow1 ? 1 : 0) + (overflow2 ? 1 : 0)
        }
        rows += 1
    }

    /// 64 hex digits.
    var hex: String {
        sum.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    private static func encode(_ value: CopyValue, into bytes: inout [UInt8]) {
        switch value {
        case .null: bytes.append(0)
        case .integer(let n): bytes.append(1); append(UInt64(bitPattern: n), to: &bytes)
        case .real(let d): bytes.append(2); append(d.bitPattern, to: &bytes)
        case .text(let s):
            let utf8 = Array(s.utf8)
            bytes.append(3); append(UInt64(utf8.count), to: &bytes); bytes += utf8
        case .bytes(let b): bytes.append(4); append(UInt64(b.count), to: &bytes); bytes += b
        }
    }

    private static func append(_ word: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: word.bigEndian) { bytes += $0 }
    }
}
