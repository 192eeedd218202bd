/// What the linter needs of one rule: its patterns and the settings it is matched with.
struct RuleShape {
    var path: String?
    var query: QueryPattern?
    var fragment: String?
    var folded: Bool
    var encoded: Bool
    /// False for legacy `paths`, where `$(…)` is literal.
    var variables: Bool

    init(_ component: Component, settings: MatchingDefaults) {
        let resolved = component.settings.over(settings)
        path = component.path
        query = component.query
        fragment = component.fragment
        folded = resolved.caseSensitive == false
        encoded = resolved.percentEncoded ?? true
        variables = true
    }

    init(_ path: PathRule) {
        self.path = path.pattern
        folded = false
        encoded = true
        variables = false
    }

    func tokens(_ pattern: String) -> [PatternToken] {
        let tokens = PatternSyntax.tokens(pattern, variables: variables)
        guard folded else { return tokens }
        return tokens.map { if case .literal(let unit) = $0 { .literal(PatternSyntax.fold(unit)) } else { $0 } }
    }

    static func isCatchAll(_ pattern: String) -> Bool {
        pattern.isEmpty == false && pattern.allSatisfy { $0 == "*" }
    }
}
