/// The linter's checks of `applinks` entries and their patterns.
struct RuleChecks {
    let variables: [String: [String]]
    private(set) var diagnostics: [Diagnostic] = []

    init(variables: [String: [String]]) { self.variables = variables }

    mutating func checkVariables(at path: String) {
        for (name, values) in variables.sorted(by: { $0.key < $1.key }) {
            if SubstitutionVariables.builtInNames.contains(name) {
                warn("\(path).\(name)", "replaces the built-in $(\(name)) in this file")
            }
            if values.contains(where: { $0.contains("$(") }) {
                warn("\(path).\(name)", "a value cannot use another variable; \"$(…)\" in it is matched as written (spec §2.3 rule 7)")
            }
        }
    }

    mutating func check(_ detail: Detail, settings: MatchingDefaults, at path: String) {
        if detail.appIDs.isEmpty {
            warn(path, "names no app (no appIDs or appID): its rules apply to nothing")
        }
        for appID in detail.appIDs where !Self.isAppID(appID) {
            warn(path, "\"\(appID)\" is not an app ID: expected a 10-character App ID prefix, a dot and a bundle ID (spec §2.2)")
        }
        switch (detail.components, detail.paths) {
        case (nil, nil):
            warn(path, "has neither components nor paths: it matches no URL")
        case (.some, .some):
            warn(path, "mixes paths and components: iOS 13+ uses components and ignores paths; Apple advises one format per entry (spec §2.2)")
        default: break
        }
        if let components = detail.components {
            let shapes = components.map { RuleShape($0, settings: settings) }
            for (index, component) in components.enumerated() {
                let at = "\(path).components[\(index)]"
                checkPatterns(shapes[index], at: at)
                if component.exclude { checkExclusionQuery(component, at: at) }
                if let earlier = shapes[..<index].firstIndex(where: { Coverage.covers($0, shapes[index]) }) {
                    warn(at, "never decides: \(path).components[\(earlier)] matches every URL this matches, and the first match wins (spec §2.3 rule 3)")
                }
            }
        }
        if let paths = detail.paths {
            let shapes = paths.map(RuleShape.init)
            for (index, rule) in paths.enumerated() {
                let at = "\(path).paths[\(index)]"
                checkPatterns(shapes[index], at: at)
                if rule.pattern.contains("#") {
                    warn(at, "legacy paths compare the path only; the \"#\" part can never match (spec §2.4)")
                }
                guard let earlier = shapes[..<index].firstIndex(where: { Coverage.covers($0, shapes[index]) }) else { continue }
                if rule.isExclusion && !paths[earlier].isExclusion {
                    warn(at, "NOT never applies: \(path).paths[\(earlier)] \"\(paths[earlier].text)\" matches first; put NOT entries before catch-alls (spec §2.4, §2.7)")
                } else {
                    warn(at, "never decides: \(path).paths[\(earlier)] matches every URL this matches, and the first match wins (spec §2.4)")
                }
            }
        }
    }

    /// The `debug: "*"` trap: absent items are the empty string, which `*` matches.
    private mutating func checkExclusionQuery(_ component: Component, at path: String) {
        guard case .items(let items) = component.query else { return }
        for item in items where RuleShape.isCatchAll(item.pattern) {
            warn("\(path).?.\(item.name)", "\"\(item.pattern)\" also matches URLs without a \"\(item.name)\" item (absent is the empty string), so this exclude blocks them too; write \"?*\" to require the item (spec §2.3 rule 4, §2.7)")
        }
    }

    private mutating func checkPatterns(_ shape: RuleShape, at path: String) {
        var patterns: [(key: String, pattern: String)] = []
        if let pattern = shape.path { patterns.append(("/", pattern)) }
        if let pattern = shape.fragment { patterns.append(("#", pattern)) }
        switch shape.query {
        case .whole(let pattern): patterns.append(("?", pattern))
        case .items(let items): patterns += items.map { ("?.\($0.name)", $0.pattern) }
        case nil: break
        }
        let at = shape.variables ? { "\(path).\($0)" } : { (_: String) in path }
        for (key, pattern) in patterns {
            if pattern.contains("**") {
                warn(at(key), "\"**\" is the same as \"*\": Apple's \"*\" already crosses \"/\" and there is no \"**\" (spec §2.7)")
            }
            if shape.encoded, pattern.unicodeScalars.contains(where: { $0.value > 0x7F }) {
                warn(at(key), "non-ASCII text is compared with the percent-encoded URL and never matches; write %XX escapes or set percentEncoded to false (spec §2.3 rule 5)")
            }
            if shape.variables {
                for case .variable(let name) in PatternSyntax.tokens(pattern)
                where variables[name] == nil && !SubstitutionVariables.builtInNames.contains(name) {
                    warn(at(key), "$(\(name)) is not a defined substitution variable; it is matched as written")
                }
            }
            if key == "/", let first = pattern.first, first != "/", first != "*", first != "?", first != "$" {
                warn(at(key), "\"\(pattern)\" does not start with \"/\": patterns are compared as written and every URL path starts with \"/\", so it never matches (D25)")
            }
        }
    }

    /// `ABCDE12345.com.example.app`: a 10-character alphanumeric prefix, a dot, a bundle ID.
    static func isAppID(_ text: String) -> Bool {
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0].count == 10 && parts[0].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            && parts[1].isEmpty == false
    }

    private mutating func warn(_ path: String, _ message: String) {
        diagnostics.append(Diagnostic(.warning, .value(path), message))
    }
}
