/// Sets of plain words (variables' values) as tries in two flat arrays, to find every value
/// that starts at a position of the input in one walk without allocating.
///
/// A program holds one table for all its variables; each trie is known by its root node.
/// Built-in code lists are built once per process and appended by copy.
struct TrieTable: Sendable {
    struct Node: Sendable {
        /// This node's children: `edges[edgeStart ..< edgeStart + edgeCount]`, in insertion order.
        var edgeStart: Int32
        var edgeCount: Int32
        var terminal: Bool
    }

    struct Edge: Sendable {
        var unit: UInt32
        var child: Int32
    }

    private(set) var nodes: [Node] = []
    private(set) var edges: [Edge] = []

    /// Adds a trie of `words`; returns its root.
    mutating func add(_ words: [[UInt32]]) -> Int32 {
        // Children lists are built per node first, then laid out contiguously.
        var children: [[Edge]] = [[]]
        var terminal = [false]
        for word in words {
            var node = 0
            for unit in word {
                if let edge = children[node].first(where: { $0.unit == unit }) {
                    node = Int(edge.child)
                    continue
                }
                children.append([])
                terminal.append(false)
                children[node].append(Edge(unit: unit, child: Int32(children.count - 1)))
                node = children.count - 1
            }
            terminal[node] = true
        }
        let base = Int32(nodes.count)
        for (index, list) in children.enumerated() {
            nodes.append(Node(edgeStart: Int32(edges.count), edgeCount: Int32(list.count), terminal: terminal[index]))
            edges += list.map { Edge(unit: $0.unit, child: $0.child + base) }
        }
        return base
    }

    /// Appends a copy of `other` (built with one trie rooted at 0); returns its root here.
    mutating func append(_ other: TrieTable) -> Int32 {
        let base = Int32(nodes.count)
        let edgeBase = Int32(edges.count)
        nodes += other.nodes.map { Node(edgeStart: $0.edgeStart + edgeBase, edgeCount: $0.edgeCount, terminal: $0.terminal) }
        edges += other.edges.map { Edge(unit: $0.unit, child: $0.child + base) }
        return base
    }

    private static func single(_ words: [String], folded: Bool) -> TrieTable {
        var table = TrieTable()
        _ = table.add(words.map { $0.unicodeScalars.map { folded ? PatternSyntax.fold($0.value) : $0.value } })
        return table
    }

    /// The built-in code lists (spec §2.3 rule 7), as written and lowercased.
    static let languages = single(ISOCodes.languages, folded: false)
    static let languagesFolded = single(ISOCodes.languages, folded: true)
    static let regions = single(ISOCodes.regions, folded: false)
    static let regionsFolded = single(ISOCodes.regions, folded: true)
}
