/// A set of plain words (a variable's values) as a trie, to find every value that starts at a
/// position of the input in one walk.
struct WordTrie: Sendable {
    /// Per node: (code point, child node) pairs.
    private var children: [[(unit: UInt32, node: Int)]] = [[]]
    private var terminal: [Bool] = [false]

    init(_ words: [[UInt32]]) {
        for word in words {
            var node = 0
            for unit in word {
                if let next = children[node].first(where: { $0.unit == unit })?.node {
                    node = next
                } else {
                    children.append([])
                    terminal.append(false)
                    children[node].append((unit: unit, node: children.count - 1))
                    node = children.count - 1
                }
            }
            terminal[node] = true
        }
    }

    /// The positions where a word starting at `start` ends, longest first.
    func ends(in input: UnsafeBufferPointer<UInt32>, from start: Int) -> [Int] {
        var found: [Int] = []
        var node = 0
        var i = start
        while true {
            if terminal[node] { found.append(i) }
            guard i < input.count, let next = children[node].first(where: { $0.unit == input[i] })?.node else { break }
            node = next
            i += 1
        }
        return found.reversed()
    }
}
