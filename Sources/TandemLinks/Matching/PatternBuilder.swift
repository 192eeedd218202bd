/// Compiles patterns into one flat program shared by every rule of a file: literal runs,
/// wildcards, character classes, tries of plain variable values and choices among wildcard
/// values (spec §2.3 rules 2, 7). Jumps and choice targets are absolute op indices.
struct PatternBuilder {
    typealias Op = MatchProgram.Op

    var ops: [Op] = []
    var units: [UInt32] = []
    var targets: [Int32] = []
    var tries = TrieTable()
    var patterns: [Pattern] = []
    /// Stars, tries and choices emitted in the current pattern: two or more make it memoize.
    private var branches = 0
    /// Roots of the built-in tries once appended (languages, languages folded, regions, regions folded).
    private var builtInRoots: [Int32?] = [nil, nil, nil, nil]

    /// Compiles `source`; returns its index in `patterns`. `variables` are the file's custom ones
    /// (nil: `$(…)` is literal, as in legacy `paths`); `folded` lowercases the pattern for
    /// case-insensitive matching, the input being lowercased by the caller.
    mutating func compile(_ source: String, variables: [String: [String]]?, folded: Bool) -> Int32 {
        let tokens = PatternSyntax.tokens(source, variables: variables != nil)
        let start = ops.count
        let unitStart = units.count
        branches = 0
        emit(tokens, variables: variables ?? [:], folded: folded)
        ops.append(.end)
        let shape = Pattern.Shape(tokens)
        let literalCount = tokens.prefix { if case .literal = $0 { true } else { false } }.count
        patterns.append(Pattern(
            shape: shape, start: Int32(start), opCount: Int32(ops.count - start),
            literalStart: Int32(unitStart), literalCount: Int32(literalCount),
            needsMemo: branches > 1,
            bigrams: shape == .general ? Self.requiredBigrams(tokens, folded: folded) : Bigrams()))
        return Int32(patterns.count - 1)
    }

    /// Every pair of adjacent literal characters a match must contain, to refuse most inputs
    /// in a few instructions before running the program.
    private static func requiredBigrams(_ tokens: [PatternToken], folded: Bool) -> Bigrams {
        var bigrams = Bigrams()
        var previous: UInt32?
        for token in tokens {
            if case .literal(let unit) = token {
                let unit = folded ? PatternSyntax.fold(unit) : unit
                if let previous { bigrams.insert(previous, unit) }
                previous = unit
            } else {
                previous = nil
            }
        }
        return bigrams
    }

    private mutating func emit(_ tokens: [PatternToken], variables: [String: [String]], folded: Bool) {
        var index = 0
        while index < tokens.count {
            switch tokens[index] {
            case .literal:
                let start = units.count
                while index < tokens.count, case .literal(let unit) = tokens[index] {
                    units.append(folded ? PatternSyntax.fold(unit) : unit)
                    index += 1
                }
                ops.append(.literal(start: Int32(start), count: Int32(units.count - start)))
                continue
            case .one: ops.append(.one)
            case .star:
                if case .star = ops.last {} else {
                    ops.append(.star)
                    branches += 1
                }
            case .variable(let name):
                emitVariable(name, variables: variables, folded: folded)
            }
            index += 1
        }
    }

    private mutating func builtInTrie(_ slot: Int, _ table: TrieTable) -> Int32 {
        if let root = builtInRoots[slot] { return root }
        let root = tries.append(table)
        builtInRoots[slot] = root
        return root
    }

    private mutating func emitVariable(_ name: String, variables: [String: [String]], folded: Bool) {
        let values: [String]
        if let custom = variables[name] {
            values = custom
        } else if let characterClass = CharacterClass(name: name) {
            ops.append(.characterClass(folded ? characterClass.folded() : characterClass))
            return
        } else if name == "lang" || name == "region" {
            branches += 1
            let root = name == "lang"
                ? (folded ? builtInTrie(1, .languagesFolded) : builtInTrie(0, .languages))
                : (folded ? builtInTrie(3, .regionsFolded) : builtInTrie(2, .regions))
            ops.append(.trie(root: root))
            return
        } else {
            // Not defined: the text stands for itself (Linter reports it).
            emit(PatternSyntax.tokens("$(\(name))", variables: false), variables: [:], folded: folded)
            return
        }
        branches += 1
        let plain = values.filter { !$0.contains("*") && !$0.contains("?") }
        let wild = values.filter { $0.contains("*") || $0.contains("?") }
        let words = plain.map { $0.unicodeScalars.map { folded ? PatternSyntax.fold($0.value) : $0.value } }
        if wild.isEmpty {
            ops.append(.trie(root: tries.add(words)))
            return
        }
        // choice → [trie, jump end] [value 1, jump end] … ; jumps patched once `end` is known.
        let choiceIndex = ops.count
        ops.append(.choice(start: 0, count: 0))
        var alternatives: [Int32] = []
        var jumps: [Int] = []
        if plain.isEmpty == false {
            alternatives.append(Int32(ops.count))
            ops.append(.trie(root: tries.add(words)))
            jumps.append(ops.count)
            ops.append(.jump(0))
        }
        for value in wild {
            alternatives.append(Int32(ops.count))
            emit(PatternSyntax.tokens(value, variables: false), variables: [:], folded: folded)
            jumps.append(ops.count)
            ops.append(.jump(0))
        }
        for jump in jumps { ops[jump] = .jump(Int32(ops.count)) }
        ops[choiceIndex] = .choice(start: Int32(targets.count), count: Int32(alternatives.count))
        targets += alternatives
    }
}
