import TandemCore

/// A component or legacy path with its patterns compiled and its settings resolved.
final class CompiledRule: Sendable {
    enum Query: Sendable {
        case whole(Pattern)
        case items([(name: [UInt32], pattern: Pattern)])
    }

    let rule: LinkRule
    let exclude: Bool
    let encoded: Bool
    let folded: Bool
    let path: Pattern?
    let query: Query?
    let fragment: Pattern?

    /// A component; `settings` are the app- and domain-level defaults already combined.
    init(_ component: Component, rule: LinkRule, settings: MatchingDefaults, variables: [String: [String]]) {
        let resolved = component.settings.over(settings)
        let folded = resolved.caseSensitive == false
        self.rule = rule
        exclude = component.exclude
        encoded = resolved.percentEncoded ?? true
        self.folded = folded
        path = component.path.map { Pattern($0, variables: variables, folded: folded) }
        fragment = component.fragment.map { Pattern($0, variables: variables, folded: folded) }
        switch component.query {
        case nil: query = nil
        case .whole(let pattern): query = .whole(Pattern(pattern, variables: variables, folded: folded))
        case .items(let items):
            query = .items(items.map { item in
                (name: item.name.unicodeScalars.map { folded ? PatternSyntax.fold($0.value) : $0.value },
                 pattern: Pattern(item.pattern, variables: variables, folded: folded))
            })
        }
    }

    /// A legacy path: the path only, case-sensitive, percent-encoded, no variables (spec §2.4).
    init(_ path: PathRule, rule: LinkRule) {
        self.rule = rule
        exclude = path.isExclusion
        encoded = true
        folded = false
        self.path = Pattern(path.pattern, variables: nil, folded: false)
        query = nil
        fragment = nil
    }

    func matches(_ views: inout URLViews) -> Bool {
        let fields = views.fields(encoded: encoded, folded: folded)
        if let path, !path.matches(fields.path) { return false }
        if let fragment, !fragment.matches(fields.fragment) { return false }
        switch query {
        case nil: return true
        case .whole(let pattern): return pattern.matches(fields.query)
        case .items(let patterns):
            for index in patterns.indices {
                var seen = false
                for item in fields.items where item.name == patterns[index].name {
                    seen = true
                    if !patterns[index].pattern.matches(item.value) { return false }
                }
                if !seen, !patterns[index].pattern.matches([]) { return false }
            }
            return true
        }
    }
}
