/// A URL's parts as code points in one of the four forms rules compare: percent-encoded or
/// decoded (`percentEncoded`), as written or lowercased (`caseSensitive` false). A class, so
/// that handing it to each rule costs one reference, not a copy of four arrays.
final class URLFields {
    let path: [UInt32]
    let query: [UInt32]
    let fragment: [UInt32]
    /// Query items split on `&` and the first `=`; an item without `=` has an empty value.
    let items: [(name: [UInt32], value: [UInt32])]

    init(_ url: LinkURL, encoded: Bool, folded: Bool) {
        func units(_ text: Substring) -> [UInt32] {
            if encoded && !folded { return text.utf8.map { UInt32($0) } } // LinkURL keeps it ASCII
            let decoded = encoded ? String(text) : LinkURL.decode(text)
            return folded ? decoded.unicodeScalars.map { PatternSyntax.fold($0.value) } : decoded.unicodeScalars.map(\.value)
        }
        path = units(Substring(url.path))
        query = units(Substring(url.query))
        fragment = units(Substring(url.fragment))
        items = url.query.isEmpty ? [] : url.query.split(separator: "&").map { item in
            guard let equals = item.firstIndex(of: "=") else { return (name: units(item), value: []) }
            return (name: units(item[..<equals]), value: units(item[item.index(after: equals)...]))
        }
    }
}

/// The forms of one URL that a match has needed so far, each built once.
struct URLViews {
    let url: LinkURL
    // Four stored slots rather than an array: no allocation per match for the cache itself.
    private var encodedAsWritten: URLFields?
    private var encodedFolded: URLFields?
    private var decodedAsWritten: URLFields?
    private var decodedFolded: URLFields?

    init(_ url: LinkURL) { self.url = url }

    mutating func fields(encoded: Bool, folded: Bool) -> URLFields {
        switch (encoded, folded) {
        case (true, false): return Self.cached(&encodedAsWritten, url, encoded: true, folded: false)
        case (true, true): return Self.cached(&encodedFolded, url, encoded: true, folded: true)
        case (false, false): return Self.cached(&decodedAsWritten, url, encoded: false, folded: false)
        case (false, true): return Self.cached(&decodedFolded, url, encoded: false, folded: true)
        }
    }

    private static func cached(_ slot: inout URLFields?, _ url: LinkURL, encoded: Bool, folded: Bool) -> URLFields {
        if let fields = slot { return fields }
        let fields = URLFields(url, encoded: encoded, folded: folded)
        slot = fields
        return fields
    }
}
