extension Substring {
    /// The `/`-separated segments of a request path, empty ones kept: what
    /// `split(separator: "/", omittingEmptySubsequences: false).map(String.init)` gives. An ASCII
    /// path (every API path) is split by scanning its UTF-8 bytes instead of grapheme clusters (a
    /// lookup's path splits cost 58,000 instructions Character by Character; decisions E17); any
    /// other is split Character-wise, since there a `/` may begin a grapheme (`/` and a combining
    /// mark) that the Character-wise split does not cut.
    var pathSegments: [String] {
        var segments: [String] = []
        let bytes = utf8
        var start = bytes.startIndex
        var index = start
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte >= 0x80 {
                let parts: [Substring] = split(separator: "/", omittingEmptySubsequences: false)
                return parts.map { String($0) }
            }
            if byte == UInt8(ascii: "/") {
                segments.append(String(decoding: bytes[start..<index], as: UTF8.self))
                start = bytes.index(after: index)
            }
            bytes.formIndex(after: &index)
        }
        segments.append(String(decoding: bytes[start..<index], as: UTF8.self))
        return segments
    }
}

extension Substring {
    /// `pathSegments.first`, without splitting the rest: an ASCII prefix up to the first `/` is
    /// read as bytes. A non-ASCII byte before that `/`, or right after it (a combining mark
    /// makes `/` part of a longer Character, which the Character-wise split does not cut),
    /// falls back to the split itself.
    var firstPathSegment: String {
        let bytes = utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte >= 0x80 { return pathSegments[0] }
            if byte == UInt8(ascii: "/") {
                let after = bytes.index(after: index)
                if after != bytes.endIndex && bytes[after] >= 0x80 { return pathSegments[0] }
                break
            }
            bytes.formIndex(after: &index)
        }
        return String(decoding: bytes[bytes.startIndex..<index], as: UTF8.self)
    }
}

extension String {
    /// As `Substring.pathSegments`.
    var pathSegments: [String] { self[...].pathSegments }
}
