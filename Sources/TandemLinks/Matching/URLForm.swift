/// A URL's parts as code points in one of the four forms rules compare: percent-encoded or
/// decoded (`percentEncoded`), as written or lowercased (`caseSensitive` false), written into
/// memory the caller provides.
struct URLForm {
    var path: UnsafeBufferPointer<UInt32>
    var query: UnsafeBufferPointer<UInt32>
    var fragment: UnsafeBufferPointer<UInt32>
    var pathBigrams: Bigrams
    var queryBigrams: Bigrams
    var fragmentBigrams: Bigrams
    /// Query items split on `&` (empty pieces skipped) and the first `=`, an item without `=`
    /// having an empty value: (name start, name count, value start, value count) per item,
    /// offsets from `base`.
    private var items: UnsafeBufferPointer<UInt32>
    private let base: UnsafePointer<UInt32>

    var itemCount: Int { items.count / 4 }

    @inline(__always)
    func item(_ index: Int) -> (name: UnsafeBufferPointer<UInt32>, value: UnsafeBufferPointer<UInt32>) {
        let k = index * 4
        return (UnsafeBufferPointer(start: base + Int(items[k]), count: Int(items[k + 1])),
                UnsafeBufferPointer(start: base + Int(items[k + 2]), count: Int(items[k + 3])))
    }

    /// Code points one form can need: `capacity(for:)` of them.
    static func capacity(for url: URLBytes) -> Int {
        max(url.path.count, 1) + 2 * url.query.count + url.fragment.count + 4 * url.itemBound
    }

    /// Writes the form of `url` at `memory`, which holds at least `capacity(for: url)` code points.
    init(_ url: URLBytes, encoded: Bool, folded: Bool, memory: UnsafeMutablePointer<UInt32>) {
        base = UnsafePointer(memory)
        var cursor = 0
        func write(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt32> {
            let count = Self.units(bytes, encoded: encoded, folded: folded, into: memory + cursor)
            defer { cursor += count }
            return UnsafeBufferPointer(start: memory + cursor, count: count)
        }
        if url.path.isEmpty {
            memory[cursor] = UInt32(UInt8(ascii: "/"))
            path = UnsafeBufferPointer(start: memory + cursor, count: 1)
            cursor += 1
        } else {
            path = write(url.path)
        }
        query = write(url.query)
        fragment = write(url.fragment)
        pathBigrams = Bigrams(path)
        queryBigrams = Bigrams(query)
        fragmentBigrams = Bigrams(fragment)
        // Each item's name and value, then the table of their offsets.
        let query = url.query
        var ranges = 0
        let tableStart = cursor + query.count
        var pieceStart = 0
        while pieceStart <= query.count, !query.isEmpty {
            var pieceEnd = pieceStart
            while pieceEnd < query.count, query[pieceEnd] != UInt8(ascii: "&") { pieceEnd += 1 }
            if pieceEnd > pieceStart {
                let piece = UnsafeBufferPointer(rebasing: query[pieceStart..<pieceEnd])
                let equals = piece.firstIndex(of: UInt8(ascii: "="))
                let nameStart = cursor
                let name = write(UnsafeBufferPointer(rebasing: piece[..<(equals ?? piece.count)]))
                let valueStart = cursor
                let value = equals.map { write(UnsafeBufferPointer(rebasing: piece[($0 + 1)...])) } ?? UnsafeBufferPointer(start: nil, count: 0)
                let row = memory + tableStart + ranges * 4
                row[0] = UInt32(nameStart)
                row[1] = UInt32(name.count)
                row[2] = UInt32(valueStart)
                row[3] = UInt32(value.count)
                ranges += 1
            }
            pieceStart = pieceEnd + 1
        }
        items = UnsafeBufferPointer(start: memory + tableStart, count: ranges * 4)
    }

    /// Writes `bytes` (percent-encoded ASCII) as code points in this form; returns how many.
    private static func units(_ bytes: UnsafeBufferPointer<UInt8>, encoded: Bool, folded: Bool,
                              into out: UnsafeMutablePointer<UInt32>) -> Int {
        if encoded || !bytes.contains(UInt8(ascii: "%")) {
            for (index, byte) in bytes.enumerated() {
                out[index] = folded ? PatternSyntax.fold(UInt32(byte)) : UInt32(byte)
            }
            return bytes.count
        }
        // Decode `%XX` escapes as `LinkURL.decode` does; bytes above ASCII are read as UTF-8.
        var count = 0
        var wide = false
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = LinkURL.hexValue(bytes[index + 1]), let low = LinkURL.hexValue(bytes[index + 2]) {
                out[count] = UInt32(high << 4 | low)
                index += 3
            } else {
                out[count] = UInt32(bytes[index])
                index += 1
            }
            wide = wide || out[count] >= 0x80
            count += 1
        }
        if wide {
            // Rare: let the standard library repair invalid UTF-8 exactly as `String(decoding:)` does.
            let decoded = String(decoding: (0..<count).map { UInt8(out[$0]) }, as: UTF8.self)
            count = 0
            for scalar in decoded.unicodeScalars {
                out[count] = scalar.value
                count += 1
            }
        }
        if folded {
            for k in 0..<count { out[k] = PatternSyntax.fold(out[k]) }
        }
        return count
    }
}
