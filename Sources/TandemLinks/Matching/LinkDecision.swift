/// What a device does with a URL for one app, and the rule that decided (spec §2.3, §2.4).
public enum LinkDecision: Sendable, Hashable, CustomStringConvertible {
    /// The URL opens the app.
    case open(LinkRule)
    /// An `exclude` component or a `NOT` path matched first: the URL stays in the browser.
    case blocked(LinkRule)
    /// No rule of the app's entries matched.
    case noMatch

    /// `open applinks.details[0].components[1] {"/":"/buy/*"}`, `no match`.
    public var description: String {
        switch self {
        case .open(let rule): "open \(rule)"
        case .blocked(let rule): "blocked \(rule)"
        case .noMatch: "no match"
        }
    }

    /// The deciding rule, nil for `noMatch`.
    public var rule: LinkRule? {
        switch self {
        case .open(let rule), .blocked(let rule): rule
        case .noMatch: nil
        }
    }
}

/// One rule of a file: a component or a legacy path, by position, with its text as written.
public struct LinkRule: Sendable, Hashable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        case component(Int)
        case path(Int)
    }

    /// Index in `applinks.details`.
    public var detail: Int
    public var kind: Kind
    /// The component as compact JSON, or the path string in quotes.
    public var text: String

    public init(detail: Int, kind: Kind, text: String) {
        self.detail = detail
        self.kind = kind
        self.text = text
    }

    /// `applinks.details[0].components[2]`
    public var location: String {
        switch kind {
        case .component(let index): "applinks.details[\(detail)].components[\(index)]"
        case .path(let index): "applinks.details[\(detail)].paths[\(index)]"
        }
    }

    public var description: String { "\(location) \(text)" }
}
