/// Every pattern of a file compiled into flat arrays of plain values, so that matching follows
/// indices through contiguous memory and never touches a reference count.
struct MatchProgram: Sendable {
    enum Op: Sendable {
        case literal(start: Int32, count: Int32)
        case one
        case star
        case characterClass(CharacterClass)
        /// One of a variable's plain values, found by walking the trie at `root`.
        case trie(root: Int32)
        /// Try each target (`targets[start..<start+count]`) in turn.
        case choice(start: Int32, count: Int32)
        case jump(Int32)
        case end
    }

    let ops: [Op]
    let units: [UInt32]
    let targets: [Int32]
    let tries: TrieTable
    let patterns: [Pattern]

    init(_ builder: PatternBuilder) {
        ops = builder.ops
        units = builder.units
        targets = builder.targets
        tries = builder.tries
        patterns = builder.patterns
    }

    /// Calls `body` with a machine over this program's memory, valid only inside `body`.
    @inline(__always)
    func withMachine<R>(_ body: (Machine) -> R) -> R {
        ops.withUnsafeBufferPointer { ops in
            units.withUnsafeBufferPointer { units in
                targets.withUnsafeBufferPointer { targets in
                    tries.nodes.withUnsafeBufferPointer { nodes in
                        tries.edges.withUnsafeBufferPointer { edges in
                            patterns.withUnsafeBufferPointer { patterns in
                                body(Machine(ops: ops, units: units, targets: targets, nodes: nodes, edges: edges,
                                             patterns: patterns))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Runs patterns of a `MatchProgram` over code points. A bundle of pointers: copying it is free.
struct Machine {
    typealias Op = MatchProgram.Op

    let ops: UnsafeBufferPointer<Op>
    let units: UnsafeBufferPointer<UInt32>
    let targets: UnsafeBufferPointer<Int32>
    let nodes: UnsafeBufferPointer<TrieTable.Node>
    let edges: UnsafeBufferPointer<TrieTable.Edge>
    let patterns: UnsafeBufferPointer<Pattern>

    /// Whether the whole of `input` matches pattern `index`; `bigrams` are the input's pairs
    /// (`Bigrams.all` when not collected).
    @inline(__always)
    func matches(_ index: Int32, _ input: UnsafeBufferPointer<UInt32>, _ bigrams: Bigrams) -> Bool {
        let pattern = patterns[Int(index)]
        switch pattern.shape {
        case .anything: return true
        case .exact:
            return input.count == Int(pattern.literalCount) && literal(Int(pattern.literalStart), Int(pattern.literalCount), at: 0, in: input)
        case .prefix:
            return input.count >= Int(pattern.literalCount) && literal(Int(pattern.literalStart), Int(pattern.literalCount), at: 0, in: input)
        case .general:
            guard pattern.bigrams.isSubset(of: bigrams) else { return false }
            return run(pattern, input)
        }
    }

    /// `matches` for a slice of `units` (a query item's name compared with an input's).
    @inline(__always)
    func equals(_ start: Int32, _ count: Int32, _ input: UnsafeBufferPointer<UInt32>) -> Bool {
        input.count == Int(count) && literal(Int(start), Int(count), at: 0, in: input)
    }

    private func run(_ pattern: Pattern, _ input: UnsafeBufferPointer<UInt32>) -> Bool {
        let base = Int(pattern.start)
        guard pattern.needsMemo else {
            return run(base, 0, input, Memo(nil, base: base, width: 0))
        }
        let width = input.count + 1
        let words = (Int(pattern.opCount) * width + 63) / 64
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { bits in
            bits.initialize(repeating: 0)
            return run(base, 0, input, Memo(bits, base: base, width: width))
        }
    }

    /// Failed (step, position) pairs, when the pattern can branch more than once.
    private struct Memo {
        let bits: UnsafeMutableBufferPointer<UInt64>?
        let base: Int
        let width: Int

        init(_ bits: UnsafeMutableBufferPointer<UInt64>?, base: Int, width: Int) {
            self.bits = bits
            self.base = base
            self.width = width
        }

        @inline(__always)
        func failed(_ pc: Int, _ i: Int) -> Bool {
            guard let bits else { return false }
            let bit = (pc - base) * width + i
            return bits[bit >> 6] & (1 << UInt64(bit & 63)) != 0
        }

        func markFailed(_ pc: Int, from start: Int, through end: Int) {
            guard bits != nil else { return }
            var i = start
            while i <= end && !failed(pc, i) {
                markFailed(pc, i)
                i += 1
            }
        }

        @inline(__always)
        func markFailed(_ pc: Int, _ i: Int) {
            guard let bits else { return }
            let bit = (pc - base) * width + i
            bits[bit >> 6] |= 1 << UInt64(bit & 63)
        }
    }

    @inline(__always)
    private func literal(_ start: Int, _ count: Int, at i: Int, in input: UnsafeBufferPointer<UInt32>) -> Bool {
        var k = 0
        while k < count {
            if input[i + k] != units[start + k] { return false }
            k += 1
        }
        return true
    }

    private func run(_ pc: Int, _ i: Int, _ input: UnsafeBufferPointer<UInt32>, _ memo: Memo) -> Bool {
        if memo.failed(pc, i) { return false }
        let matched = execute(pc, i, input, memo)
        if !matched { memo.markFailed(pc, i) }
        return matched
    }

    private func execute(_ startPC: Int, _ startI: Int, _ input: UnsafeBufferPointer<UInt32>, _ memo: Memo) -> Bool {
        var pc = startPC
        var i = startI
        while true {
            switch ops[pc] {
            case .literal(let start, let count):
                guard i + Int(count) <= input.count, literal(Int(start), Int(count), at: i, in: input) else { return false }
                i += Int(count)
                pc += 1
            case .one:
                guard i < input.count else { return false }
                i += 1
                pc += 1
            case .characterClass(let characterClass):
                guard i < input.count, characterClass.contains(input[i]) else { return false }
                i += 1
                pc += 1
            case .star:
                let next = pc + 1
                if case .end = ops[next] { return true }
                // A star that failed from i fails from any later position too (it tries a subset).
                if memo.failed(pc, i) { return false }
                defer { memo.markFailed(pc, from: i, through: input.count) }
                if case .literal(let start, let count) = ops[next] {
                    let first = units[Int(start)]
                    var j = i
                    while j + Int(count) <= input.count {
                        if input[j] == first, run(next, j, input, memo) { return true }
                        j += 1
                    }
                    return false
                }
                for j in i...input.count where run(next, j, input, memo) { return true }
                return false
            case .trie(let root):
                // Each value that starts at i, shortest first.
                var node = Int(root)
                var j = i
                while true {
                    if nodes[node].terminal, run(pc + 1, j, input, memo) { return true }
                    guard j < input.count, let child = child(of: node, input[j]) else { return false }
                    node = child
                    j += 1
                }
            case .choice(let start, let count):
                for k in Int(start)..<Int(start + count) where run(Int(targets[k]), i, input, memo) { return true }
                return false
            case .jump(let target):
                pc = Int(target)
            case .end:
                return i == input.count
            }
        }
    }

    @inline(__always)
    private func child(of node: Int, _ unit: UInt32) -> Int? {
        let start = Int(nodes[node].edgeStart)
        for k in start..<(start + Int(nodes[node].edgeCount)) where edges[k].unit == unit {
            return Int(edges[k].child)
        }
        return nil
    }
}
