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

    /// Calls `body` with each position where a word starting at `start` ends, shortest first,
    /// until it returns true; returns whether it did. Allocates nothing.
    func contains(in input: UnsafeBufferPointer<UInt32>, from start: Int, where body: (Int) -> Bool) -> Bool {
        var node = 0
        var i = start
        while true {
            if terminal[node], body(i) { return true }
            guard i < input.count, let next = children[node].first(where: { $0.unit == input[i] })?.node else { return false }
            node = next
            i += 1
        }
    }
}
