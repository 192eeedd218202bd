/// Whether one rule matches every URL another matches, so that the other, coming later, can
/// never decide (first match wins, spec §2.3 rule 3, §2.4).
///
/// Conservative: `true` only when provable from the patterns' shapes (equal patterns,
/// catch-alls, a literal prefix and/or suffix around one `*`); `false` means "not shown".
enum Coverage {
    static func covers(_ earlier: RuleShape, _ later: RuleShape) -> Bool {
        covers(earlier.path, earlier, later.path, later)
            && covers(earlier.fragment, earlier, later.fragment, later)
            && coversQuery(earlier, later)
    }

    private static func coversQuery(_ earlier: RuleShape, _ later: RuleShape) -> Bool {
        switch earlier.query {
        case nil: return true
        case .whole(let pattern):
            if RuleShape.isCatchAll(pattern) { return true }
            guard case .whole(let other) = later.query else { return false }
            return covers(pattern, earlier, other, later)
        case .items(let items):
            for item in items where !RuleShape.isCatchAll(item.pattern) {
                // A later rule that leaves the item free lets it be absent or anything.
                guard case .items(let others) = later.query, let other = others.first(where: { $0.name == item.name }),
                      covers(item.pattern, earlier, other.pattern, later) else { return false }
            }
            return true
        }
    }

    /// `nil` is an absent key, which matches anything.
    private static func covers(_ a: String?, _ earlier: RuleShape, _ b: String?, _ later: RuleShape) -> Bool {
        guard let a, !RuleShape.isCatchAll(a) else { return true }
        guard let b else { return false }
        guard earlier.encoded == later.encoded, earlier.folded || !later.folded else { return false }
        let ta = earlier.tokens(a)
        var tb = later.tokens(b)
        if earlier.folded && !later.folded {
            tb = tb.map { if case .literal(let unit) = $0 { .literal(PatternSyntax.fold(unit)) } else { $0 } }
        }
        if ta == tb { return true }
        // a = prefix * suffix (one run of stars, literals around it)
        guard let star = ta.firstIndex(of: .star) else { return false }
        let prefix = ta[..<star]
        let suffix = ta[star...].drop { $0 == .star }
        guard (prefix + suffix).allSatisfy(isLiteral) else { return false }
        let leading = tb.prefix(while: isLiteral)
        let trailing = tb.reversed().prefix(while: isLiteral).reversed()
        if leading.count == tb.count {
            return tb.count >= prefix.count + suffix.count && tb.starts(with: prefix) && tb.reversed().starts(with: suffix.reversed())
        }
        return leading.starts(with: prefix) && trailing.reversed().starts(with: suffix.reversed())
    }

    private static func isLiteral(_ token: PatternToken) -> Bool {
        if case .literal = token { true } else { false }
    }
}
