/// A URL split into the parts a universal-link rule compares: path, query, fragment.
///
/// Accepts a full URL (`https://example.com/a?b#c`, scheme and authority dropped) or a bare
/// path (`/a?b#c`). The host is kept for the caller; which file applies to it is not this
/// type's concern. An empty path is `/` (both request `/`); an absent query or fragment is the
/// empty string (spec §2.3 rule 4). Characters a browser would escape (spaces, controls,
/// non-ASCII) are percent-encoded as UTF-8, so `encoded` is what a device matches when
/// `percentEncoded` is true.
public struct LinkURL: Sendable, Hashable {
    /// The authority (`example.com`, `user@host:8443`) or nil for a bare path.
    public var host: String?
    /// Percent-encoded path, query (without `?`) and fragment (without `#`).
    public var path: String
    public var query: String
    public var fragment: String

    public init(_ text: String) {
        var rest = Substring(text)
        if let colon = rest.firstIndex(of: ":"), rest[colon...].hasPrefix("://"),
           rest[..<colon].allSatisfy({ $0.isLetter || $0 == "+" || $0 == "-" || $0 == "." }) {
            let afterScheme = rest[rest.index(colon, offsetBy: 3)...]
            let authorityEnd = afterScheme.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? afterScheme.endIndex
            host = String(afterScheme[..<authorityEnd])
            rest = afterScheme[authorityEnd...]
        }
        if let hash = rest.firstIndex(of: "#") {
            fragment = Self.encode(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        } else {
            fragment = ""
        }
        if let mark = rest.firstIndex(of: "?") {
            query = Self.encode(rest[rest.index(after: mark)...])
            rest = rest[..<mark]
        } else {
            query = ""
        }
        path = rest.isEmpty ? "/" : Self.encode(rest)
    }

    /// Percent-encodes bytes outside printable ASCII; `%XX` already there stays as written.
    static func encode(_ text: Substring) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if byte > 0x20 && byte < 0x7F {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes `%XX` escapes and reads the bytes as UTF-8 (invalid sequences become U+FFFD);
    /// `+` stays `+`, as `URLQueryItem` leaves it.
    static func decode(_ text: Substring) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return String(text) }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
