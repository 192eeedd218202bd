/// One compiled pattern: where its program lies in `MatchProgram`, and what lets most inputs
/// be decided without running it.
///
/// Matching is linear for the usual shapes (`*`, a literal, a literal then `*`) and polynomial
/// for the rest: a pattern with two or more branch points memoizes failed (step, position)
/// pairs, so no URL can make a pattern take exponential time.
struct Pattern: Sendable {
    enum Shape: Sendable {
        case anything
        case exact
        case prefix
        case general

        init(_ tokens: [PatternToken]) {
            let literals = tokens.prefix { if case .literal = $0 { true } else { false } }.count
            if tokens.isEmpty == false, tokens.allSatisfy({ $0 == .star }) {
                self = .anything
            } else if literals == tokens.count {
                self = .exact
            } else if literals == tokens.count - 1, tokens.last == .star {
                self = .prefix
            } else {
                self = .general
            }
        }
    }

    var shape: Shape
    /// The first op, and the number of ops through `end`.
    var start: Int32
    var opCount: Int32
    /// The leading literal text in `MatchProgram.units` (all of it for `exact` and `prefix`).
    var literalStart: Int32
    var literalCount: Int32
    var needsMemo: Bool
    /// Adjacent literal pairs every match contains (`general` patterns only).
    var bigrams: Bigrams
}

/// A 256-bit set of hashed pairs of adjacent code points: a pattern whose pairs are not all in
/// the input's set cannot match it. Never refuses a match; may let a non-match through.
struct Bigrams: Sendable {
    var a: UInt64 = 0
    var b: UInt64 = 0
    var c: UInt64 = 0
    var d: UInt64 = 0

    /// Every bit set: what an input whose pairs were not collected offers.
    static let all = Bigrams(a: ~0, b: ~0, c: ~0, d: ~0)

    @inline(__always)
    mutating func insert(_ first: UInt32, _ second: UInt32) {
        let hash = ((first &* 0x9E37_79B1) ^ second) &* 0x85EB_CA6B
        let bit = UInt64(1) << UInt64((hash >> 24) & 63)
        switch hash >> 30 {
        case 0: a |= bit
        case 1: b |= bit
        case 2: c |= bit
        default: d |= bit
        }
    }

    @inline(__always)
    func isSubset(of other: Bigrams) -> Bool {
        (a & ~other.a) | (b & ~other.b) | (c & ~other.c) | (d & ~other.d) == 0
    }

    /// The pairs of `input`.
    init(_ input: UnsafeBufferPointer<UInt32>) {
        guard input.count > 1 else { return }
        for index in 1..<input.count { insert(input[index - 1], input[index]) }
    }

    init() {}

    private init(a: UInt64, b: UInt64, c: UInt64, d: UInt64) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
    }
}
