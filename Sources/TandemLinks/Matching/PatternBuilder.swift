/// Turns pattern tokens into `Pattern`'s program: literal runs, wildcards, character classes,
/// tries of plain variable values and choices among wildcard values (spec §2.3 rules 2, 7).
struct PatternBuilder {
    typealias Op = Pattern.Op

    var ops: [Op] = []
    var units: [UInt32] = []
    var targets: [Int] = []
    var tries: [WordTrie] = []
    /// Stars, tries and choices emitted: two or more make `Pattern` memoize.
    var branches = 0

    mutating func emit(_ tokens: [PatternToken], variables: [String: [String]], folded: Bool) {
        var index = 0
        while index < tokens.count {
            switch tokens[index] {
            case .literal:
                let start = units.count
                while index < tokens.count, case .literal(let unit) = tokens[index] {
                    units.append(folded ? PatternSyntax.fold(unit) : unit)
                    index += 1
                }
                ops.append(.literal(start: start, count: units.count - start))
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

    private mutating func emitVariable(_ name: String, variables: [String: [String]], folded: Bool) {
        let values: [String]
        if let custom = variables[name] {
            values = custom
        } else if let characterClass = CharacterClass(name: name) {
            ops.append(.characterClass(folded ? characterClass.folded() : characterClass))
            return
        } else if name == "lang" || name == "region" {
            branches += 1
            tries.append(name == "lang" ? (folded ? .languagesFolded : .languages) : (folded ? .regionsFolded : .regions))
            ops.append(.trie(tries.count - 1))
            return
        } else {
            // Not defined: the text stands for itself (Linter reports it).
            emit(PatternSyntax.tokens("$(\(name))", variables: false), variables: [:], folded: folded)
            return
        }
        branches += 1
        let plain = values.filter { !$0.contains("*") && !$0.contains("?") }
        let wild = values.filter { $0.contains("*") || $0.contains("?") }
        let trie = WordTrie(plain.map { $0.unicodeScalars.map { folded ? PatternSyntax.fold($0.value) : $0.value } })
        if wild.isEmpty {
            tries.append(trie)
            ops.append(.trie(tries.count - 1))
            return
        }
        // choice → [trie, jump end] [value 1, jump end] … ; jumps patched once `end` is known.
        let choiceIndex = ops.count
        ops.append(.choice(start: 0, count: 0))
        var alternatives: [Int] = []
        var jumps: [Int] = []
        if plain.isEmpty == false {
            alternatives.append(ops.count)
            tries.append(trie)
            ops.append(.trie(tries.count - 1))
            jumps.append(ops.count)
            ops.append(.jump(0))
        }
        for value in wild {
            alternatives.append(ops.count)
            emit(PatternSyntax.tokens(value, variables: false), variables: [:], folded: folded)
            jumps.append(ops.count)
            ops.append(.jump(0))
        }
        for jump in jumps { ops[jump] = .jump(ops.count) }
        ops[choiceIndex] = .choice(start: targets.count, count: alternatives.count)
        targets += alternatives
    }
}
