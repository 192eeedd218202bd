/// A URL's percent-encoded path, query (without `?`) and fragment (without `#`) as ASCII
/// bytes, borrowed from the caller's memory for one match. An empty path stands for `/`.
struct URLBytes {
    var path: UnsafeBufferPointer<UInt8>
    var query: UnsafeBufferPointer<UInt8>
    var fragment: UnsafeBufferPointer<UInt8>

    /// Splits URL text the way `LinkURL.init` does, when every byte is printable ASCII (then
    /// nothing needs escaping and bytes are characters); nil otherwise, for `LinkURL` to do it.
    init?(splitting text: UnsafeBufferPointer<UInt8>) {
        var colon = -1
        for (index, byte) in text.enumerated() {
            guard byte > 0x20 && byte < 0x7F else { return nil }
            if colon < 0 && byte == UInt8(ascii: ":") { colon = index }
        }
        var start = 0
        if colon >= 0, colon + 2 < text.count, text[colon + 1] == UInt8(ascii: "/"), text[colon + 2] == UInt8(ascii: "/"),
           text[..<colon].allSatisfy(Self.isSchemeCharacter) {
            start = colon + 3
            while start < text.count, text[start] != UInt8(ascii: "/"), text[start] != UInt8(ascii: "?"), text[start] != UInt8(ascii: "#") {
                start += 1
            }
        }
        var end = text.count
        var fragment = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        if let hash = text[start...].firstIndex(of: UInt8(ascii: "#")) {
            fragment = UnsafeBufferPointer(rebasing: text[(hash + 1)...])
            end = hash
        }
        var query = UnsafeBufferPointer<UInt8>(start: nil, count: 0)
        if let mark = text[start..<end].firstIndex(of: UInt8(ascii: "?")) {
            query = UnsafeBufferPointer(rebasing: text[(mark + 1)..<end])
            end = mark
        }
        self.path = UnsafeBufferPointer(rebasing: text[start..<end])
        self.query = query
        self.fragment = fragment
    }

    init(path: UnsafeBufferPointer<UInt8>, query: UnsafeBufferPointer<UInt8>, fragment: UnsafeBufferPointer<UInt8>) {
        self.path = path
        self.query = query
        self.fragment = fragment
    }

    /// `LinkURL` accepts letters, `+`, `-` and `.` before `://` (ASCII here).
    private static func isSchemeCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."): true
        default: false
        }
    }

    /// The number of query items (`&`-separated pieces, empty ones included), an upper bound.
    var itemBound: Int {
        query.isEmpty ? 0 : query.reduce(1) { $0 + ($1 == UInt8(ascii: "&") ? 1 : 0) }
    }
}
