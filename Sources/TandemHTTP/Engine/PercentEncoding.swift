/// Re-encodes the URI parts libwebsockets hands over already percent-decoded.
///
/// libwebsockets 4.1 decodes `%XX` (and turns a literal `+` into a space) in the path and in
/// every query argument while parsing, and splits the query at `&` and `;`. Delivering those
/// decoded bytes would make `a%26b=c` and `a&b=c` indistinguishable, so each piece is encoded
/// again with one fixed rule: bytes outside a small safe set become `%XX` (upper-case hex).
enum PercentEncoding {
    /// Encodes a decoded path. Keeps unreserved characters, sub-delimiters, `:`, `@` and `/`.
    static func encodePath(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        encode(bytes, keeping: pathSafe)
    }

    /// Rebuilds a raw query from decoded `name=value` arguments: each name and value encoded
    /// (only unreserved characters and `!$'()*,/:@` kept, so never `+`, `&`, `=` or `;`),
    /// joined with `&`. Empty arguments are dropped.
    static func encodeQuery(_ arguments: [ArraySlice<UInt8>]) -> String {
        var result: [UInt8] = []
        for argument in arguments where !argument.isEmpty {
            if !result.isEmpty { result.append(UInt8(ascii: "&")) }
            if let equals = argument.firstIndex(of: UInt8(ascii: "=")) {
                append(argument[argument.startIndex..<equals], to: &result, keeping: querySafe)
                result.append(UInt8(ascii: "="))
                append(argument[(equals + 1)...], to: &result, keeping: querySafe)
            } else {
                append(argument, to: &result, keeping: querySafe)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func encode(_ bytes: UnsafeBufferPointer<UInt8>, keeping safe: SafeSet) -> String {
        if bytes.allSatisfy({ safe.contains($0) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 16)
        append(bytes, to: &result, keeping: safe)
        return String(decoding: result, as: UTF8.self)
    }

    private static func append<Bytes: Collection<UInt8>>(_ bytes: Bytes, to result: inout [UInt8],
                                                         keeping safe: SafeSet) {
        for byte in bytes {
            if safe.contains(byte) {
                result.append(byte)
            } else {
                result.append(UInt8(ascii: "%"))
                result.append(hexDigits[Int(byte >> 4)])
                result.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// A set of ASCII bytes as a 128-bit mask.
    struct SafeSet {
        private var low: UInt64 = 0
        private var high: UInt64 = 0

        init(_ characters: String) {
            for byte in characters.utf8 {
                if byte < 64 { low |= 1 << UInt64(byte) } else { high |= 1 << UInt64(byte - 64) }
            }
        }

        func contains(_ byte: UInt8) -> Bool {
            if byte < 64 { return low & (1 << UInt64(byte)) != 0 }
            if byte < 128 { return high & (1 << UInt64(byte - 64)) != 0 }
            return false
        }
    }

    private static let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
    private static let pathSafe = SafeSet(unreserved + "!$&'()*+,;=:@/")
    private static let querySafe = SafeSet(unreserved + "!$'()*,/:@")
}
