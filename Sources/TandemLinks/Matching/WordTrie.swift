/// A set of plain words (a variable's values) as a trie, to find every value that starts at a
/// position of the input in one walk. ASCII steps are one table lookup; other code points
/// search a short list.
final class WordTrie: Sendable {
    /// `ascii[node * 128 + unit]`: the child node, or -1.
    private let ascii: [Int32]
    /// (node, code point, child) for code points above ASCII.
    private let wide: [(node: Int32, unit: UInt32, child: Int32)]
    private let terminal: [Bool]

    init(_ words: [[UInt32]]) {
        var ascii = [Int32](repeating: -1, count: 128)
        var wide: [(node: Int32, unit: UInt32, child: Int32)] = []
        var terminal = [false]
        for word in words {
            var node = 0
            for unit in word {
                if let next = Self.child(node, unit, ascii, wide) {
                    node = next
                    continue
                }
                let new = terminal.count
                terminal.append(false)
                ascii += repeatElement(-1, count: 128)
                if unit < 128 {
                    ascii[node * 128 + Int(unit)] = Int32(new)
                } else {
                    wide.append((node: Int32(node), unit: unit, child: Int32(new)))
                }
                node = new
            }
            terminal[node] = true
        }
        self.ascii = ascii
        self.wide = wide
        self.terminal = terminal
    }

    @inline(__always)
    private static func child(_ node: Int, _ unit: UInt32, _ ascii: [Int32], _ wide: [(node: Int32, unit: UInt32, child: Int32)]) -> Int? {
        if unit < 128 {
            let next = ascii[node * 128 + Int(unit)]
            return next < 0 ? nil : Int(next)
        }
        return wide.first { $0.node == node && $0.unit == unit }.map { Int($0.child) }
    }

    /// Calls `body` with each position where a word starting at `start` ends, shortest first,
    /// until it returns true; returns whether it did. Allocates nothing.
    func contains(in input: UnsafeBufferPointer<UInt32>, from start: Int, where body: (Int) -> Bool) -> Bool {
        var node = 0
        var i = start
        while true {
            if terminal[node], body(i) { return true }
            guard i < input.count, let next = Self.child(node, input[i], ascii, wide) else { return false }
            node = next
            i += 1
        }
    }

    /// The built-in code lists, built once per process and shared by every pattern.
    static let languages = WordTrie(ISOCodes.languages.map { $0.unicodeScalars.map(\.value) })
    static let languagesFolded = WordTrie(ISOCodes.languages.map { $0.unicodeScalars.map { PatternSyntax.fold($0.value) } })
    static let regions = WordTrie(ISOCodes.regions.map { $0.unicodeScalars.map(\.value) })
    static let regionsFolded = WordTrie(ISOCodes.regions.map { $0.unicodeScalars.map { PatternSyntax.fold($0.value) } })
}
