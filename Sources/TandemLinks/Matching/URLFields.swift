/// A URL's parts as code points in one of the four forms rules compare: percent-encoded or
/// decoded (`percentEncoded`), as written or lowercased (`caseSensitive` false).
struct URLFields {
    var path: [UInt32]
    var query: [UInt32]
    var fragment: [UInt32]
    /// Query items split on `&` and the first `=`; an item without `=` has an empty value.
    var items: [(name: [UInt32], value: [UInt32])]

    init(_ url: LinkURL, encoded: Bool, folded: Bool) {
        func units(_ text: Substring) -> [UInt32] {
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
    private var cache: [URLFields?] = [nil, nil, nil, nil]

    init(_ url: LinkURL) { self.url = url }

    mutating func fields(encoded: Bool, folded: Bool) -> URLFields {
        let slot = (encoded ? 0 : 2) + (folded ? 1 : 0)
        if let fields = cache[slot] { return fields }
        let fields = URLFields(url, encoded: encoded, folded: folded)
        cache[slot] = fields
        return fields
    }
}
