/// A component or legacy path with its patterns compiled into a `MatchProgram` and its
/// settings resolved: plain values only, so a file's rules are one contiguous array.
struct CompiledRule: Sendable {
    /// A query item to compare: its name in `MatchProgram.units`, and the value's pattern.
    struct Item: Sendable {
        var nameStart: Int32
        var nameCount: Int32
        var pattern: Int32
    }

    static let none: Int32 = -1

    var exclude: Bool
    var encoded: Bool
    var folded: Bool
    /// Pattern indices, or `none`.
    var path: Int32
    var fragment: Int32
    var wholeQuery: Int32
    /// This rule's query items, `items[itemStart ..< itemStart + itemCount]` of the matcher.
    var itemStart: Int32
    var itemCount: Int32

    /// A component; `settings` are the app- and domain-level defaults already combined.
    init(_ component: Component, settings: MatchingDefaults, variables: [String: [String]],
         builder: inout PatternBuilder, items: inout [Item]) {
        let resolved = component.settings.over(settings)
        let folded = resolved.caseSensitive == false
        exclude = component.exclude
        encoded = resolved.percentEncoded ?? true
        self.folded = folded
        path = component.path.map { builder.compile($0, variables: variables, folded: folded) } ?? Self.none
        fragment = component.fragment.map { builder.compile($0, variables: variables, folded: folded) } ?? Self.none
        wholeQuery = Self.none
        itemStart = Int32(items.count)
        itemCount = 0
        switch component.query {
        case nil: break
        case .whole(let pattern): wholeQuery = builder.compile(pattern, variables: variables, folded: folded)
        case .items(let patterns):
            for item in patterns {
                let nameStart = builder.units.count
                builder.units += item.name.unicodeScalars.map { folded ? PatternSyntax.fold($0.value) : $0.value }
                let nameCount = builder.units.count - nameStart
                let pattern = builder.compile(item.pattern, variables: variables, folded: folded)
                items.append(Item(nameStart: Int32(nameStart), nameCount: Int32(nameCount), pattern: pattern))
            }
            itemCount = Int32(patterns.count)
        }
    }

    /// A legacy path: the path only, case-sensitive, percent-encoded, no variables (spec §2.4).
    init(_ path: PathRule, builder: inout PatternBuilder) {
        exclude = path.isExclusion
        encoded = true
        folded = false
        self.path = builder.compile(path.pattern, variables: nil, folded: false)
        fragment = Self.none
        wholeQuery = Self.none
        itemStart = 0
        itemCount = 0
    }

    /// Whether `form` (the URL in this rule's form) matches: path, fragment, then query; every
    /// item named must match each of its occurrences, an absent item as the empty string.
    @inline(__always)
    func matches(_ form: UnsafePointer<URLForm>, _ machine: Machine, _ items: UnsafeBufferPointer<Item>) -> Bool {
        if path != Self.none, !machine.matches(path, form.pointee.path, form.pointee.pathBigrams) { return false }
        if fragment != Self.none, !machine.matches(fragment, form.pointee.fragment, form.pointee.fragmentBigrams) { return false }
        if wholeQuery != Self.none { return machine.matches(wholeQuery, form.pointee.query, form.pointee.queryBigrams) }
        for item in items[Int(itemStart)..<Int(itemStart + itemCount)] {
            var seen = false
            for index in 0..<form.pointee.itemCount {
                let (name, value) = form.pointee.item(index)
                guard machine.equals(item.nameStart, item.nameCount, name) else { continue }
                seen = true
                if !machine.matches(item.pattern, value, .all) { return false }
            }
            if !seen, !machine.matches(item.pattern, UnsafeBufferPointer(start: nil, count: 0), .all) { return false }
        }
        return true
    }
}
