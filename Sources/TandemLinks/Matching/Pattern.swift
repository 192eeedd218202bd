/// A pattern compiled once into a small backtracking program over code points.
///
/// Matching is linear for the usual shapes (`*`, a literal, a literal then `*`) and polynomial
/// for the rest: a pattern with two or more branch points memoizes failed (step, position)
/// pairs, so no URL can make a pattern take exponential time.
final class Pattern: Sendable {
    enum Op: Sendable {
        case literal(start: Int, count: Int)
        case one
        case star
        case characterClass(CharacterClass)
        /// One of a variable's plain values, found by walking `tries[index]`.
        case trie(Int)
        /// Try each target (`targets[start..<start+count]`) in turn.
        case choice(start: Int, count: Int)
        case jump(Int)
        case end
    }

    enum Shape: Sendable {
        case anything
        case exact
        case prefix
        case general
    }

    private let ops: [Op]
    private let units: [UInt32]
    private let targets: [Int]
    private let tries: [WordTrie]
    let shape: Shape
    private let needsMemo: Bool
    private let required: [UInt32]

    /// Compiles `source`. `variables` are the file's custom ones (nil: `$(…)` is literal, as in
    /// legacy `paths`); `folded` lowercases the pattern for case-insensitive matching, the
    /// input being lowercased by the caller.
    init(_ source: String, variables: [String: [String]]?, folded: Bool) {
        let tokens = PatternSyntax.tokens(source, variables: variables != nil)
        var builder = PatternBuilder()
        builder.emit(tokens, variables: variables ?? [:], folded: folded)
        builder.ops.append(.end)
        ops = builder.ops
        units = builder.units
        targets = builder.targets
        tries = builder.tries
        needsMemo = builder.branches > 1
        shape = Self.shape(of: tokens)
        required = shape == .general ? Self.longestLiteral(tokens, folded: folded) : []
    }

    /// The longest run of literal text every match must contain, to refuse most inputs
    /// before running the program.
    private static func longestLiteral(_ tokens: [PatternToken], folded: Bool) -> [UInt32] {
        var best: [UInt32] = []
        var current: [UInt32] = []
        for token in tokens + [.star] {
            if case .literal(let unit) = token {
                current.append(folded ? PatternSyntax.fold(unit) : unit)
            } else {
                if current.count > best.count { best = current }
                current = []
            }
        }
        return best.count >= 2 ? best : []
    }

    @inline(__always)
    private func contains(_ needle: [UInt32], in input: UnsafeBufferPointer<UInt32>) -> Bool {
        guard needle.count <= input.count else { return false }
        let first = needle[0]
        var i = 0
        outer: while i + needle.count <= input.count {
            if input[i] == first {
                for k in 1..<needle.count where input[i + k] != needle[k] {
                    i += 1
                    continue outer
                }
                return true
            }
            i += 1
        }
        return false
    }

    private static func shape(of tokens: [PatternToken]) -> Shape {
        if tokens.isEmpty == false, tokens.allSatisfy({ $0 == .star }) { return .anything }
        let literals = tokens.prefix { if case .literal = $0 { true } else { false } }.count
        if literals == tokens.count { return .exact }
        if literals == tokens.count - 1, tokens.last == .star { return .prefix }
        return .general
    }


    /// Whether the whole of `input` matches.
    func matches(_ input: UnsafeBufferPointer<UInt32>) -> Bool {
        switch shape {
        case .anything: return true
        case .exact: return input.count == units.count && literal(0, units.count, at: 0, in: input)
        case .prefix: return input.count >= units.count && literal(0, units.count, at: 0, in: input)
        case .general: break
        }
        if required.isEmpty == false, !contains(required, in: input) { return false }
        guard needsMemo else {
            return run(0, 0, input, Memo(nil, width: 0))
        }
        let width = input.count + 1
        let words = (ops.count * width + 63) / 64
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { bits in
            bits.initialize(repeating: 0)
            return run(0, 0, input, Memo(bits, width: width))
        }
    }

    func matches(_ input: [UInt32]) -> Bool {
        input.withUnsafeBufferPointer { matches($0) }
    }

    /// Failed (step, position) pairs, when the pattern can branch more than once.
    private struct Memo {
        let bits: UnsafeMutableBufferPointer<UInt64>?
        let width: Int

        init(_ bits: UnsafeMutableBufferPointer<UInt64>?, width: Int) {
            self.bits = bits
            self.width = width
        }

        func failed(_ pc: Int, _ i: Int) -> Bool {
            guard let bits else { return false }
            let bit = pc * width + i
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

        func markFailed(_ pc: Int, _ i: Int) {
            guard let bits else { return }
            let bit = pc * width + i
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
                guard i + count <= input.count, literal(start, count, at: i, in: input) else { return false }
                i += count
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
                    let first = units[start]
                    var j = i
                    while j + count <= input.count {
                        if input[j] == first, run(next, j, input, memo) { return true }
                        j += 1
                    }
                    return false
                }
                for j in i...input.count where run(next, j, input, memo) { return true }
                return false
            case .trie(let index):
                return tries[index].contains(in: input, from: i) { run(pc + 1, $0, input, memo) }
            case .choice(let start, let count):
                for target in targets[start..<(start + count)] where run(target, i, input, memo) { return true }
                return false
            case .jump(let target):
                pc = target
            case .end:
                return i == input.count
            }
        }
    }
}
