/// How a client's string is held in `field_index.value_text` and compared there (decisions P50).
///
/// PostgreSQL's `text` cannot hold U+0000 (SQLSTATE 22021), which a STRING field may contain
/// (SQLite stores it). Each string is stored, and every text operand of a query is bound, with
/// its UTF-8 byte 0x00 written 0x01 0x01 and 0x01 written 0x01 0x02; every other byte stays.
/// The code is prefix-free and keeps byte order, so on `COLLATE "C"` equality, `<`/`>`, `IN`
/// and `BEGINS_WITH` (a prefix range) answer as SQLite's bytewise comparison of the originals.
/// Record, zone and user record names hold printable ASCII only (D12), so they are their own
/// escape and the same operands compare with those columns unchanged.
///
/// ```swift
/// IndexedText.escape("a\u{0}b") // "a\u{1}\u{1}b"
/// ```
package enum IndexedText {
    /// `text` with U+0000 → U+0001 U+0001 and U+0001 → U+0001 U+0002; other strings unchanged.
    package static func escape(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 <= 0x01 }) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            switch byte {
            case 0x00: bytes += [0x01, 0x01]
            case 0x01: bytes += [0x01, 0x02]
            default: bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The string `escape` was given: 0x01 0x01 → 0x00, 0x01 0x02 → 0x01 (`tandem migrate`
    /// reads `value_text` back into SQLite's form with it, P50).
    package static func unescape(_ text: String) -> String {
        guard text.utf8.contains(0x01) else { return text }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var escaped = false
        for byte in text.utf8 {
            if escaped { bytes.append(byte == 0x01 ? 0x00 : 0x01); escaped = false }
            else if byte == 0x01 { escaped = true }
            else { bytes.append(byte) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
