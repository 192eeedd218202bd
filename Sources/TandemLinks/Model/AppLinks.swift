public import TandemCore

/// The `applinks` section: which URLs of the domain open which app (spec §2.2).
public struct AppLinks: Sendable, Hashable {
    /// Domain-level `defaults`, the outermost level of `caseSensitive` / `percentEncoded`.
    public var defaults: MatchingDefaults
    /// Custom `substitutionVariables`: name → values (values may hold `*` and `?`, not other
    /// variables). Built-in variables are not listed here (see `SubstitutionVariables`).
    public var substitutionVariables: [String: [String]]
    /// The entries, in file order; order decides between entries (spec §2.3 rule 3).
    public var details: [Detail]

    public init(defaults: MatchingDefaults = MatchingDefaults(), substitutionVariables: [String: [String]] = [:],
                details: [Detail] = []) {
        self.defaults = defaults
        self.substitutionVariables = substitutionVariables
        self.details = details
    }
}

/// `caseSensitive` and `percentEncoded` at one level (domain, app, or component).
///
/// Precedence: component > app-level `defaults` > domain-level `defaults` > `true` (spec §2.3 rule 6).
public struct MatchingDefaults: Sendable, Hashable {
    public var caseSensitive: Bool?
    public var percentEncoded: Bool?

    public init(caseSensitive: Bool? = nil, percentEncoded: Bool? = nil) {
        self.caseSensitive = caseSensitive
        self.percentEncoded = percentEncoded
    }

    /// These settings where set, `outer`'s elsewhere.
    public func over(_ outer: MatchingDefaults) -> MatchingDefaults {
        MatchingDefaults(caseSensitive: caseSensitive ?? outer.caseSensitive,
                         percentEncoded: percentEncoded ?? outer.percentEncoded)
    }
}

/// One `details` entry: the apps it names and their rules.
///
/// When `components` is present (even empty) it is used and `paths` is ignored, as iOS 13+ does
/// (spec §2.2).
public struct Detail: Sendable, Hashable {
    /// `appIDs` followed by the legacy singular `appID`, each `APPIDPREFIX.bundle.id`.
    public var appIDs: [String]
    /// Modern rules; nil when the key is absent.
    public var components: [Component]?
    /// Legacy rules; nil when the key is absent.
    public var paths: [PathRule]?
    /// App-level `defaults`.
    public var defaults: MatchingDefaults

    public init(appIDs: [String], components: [Component]? = nil, paths: [PathRule]? = nil,
                defaults: MatchingDefaults = MatchingDefaults()) {
        self.appIDs = appIDs
        self.components = components
        self.paths = paths
        self.defaults = defaults
    }
}

/// One `components` dictionary. Absent `/`, `?`, `#` match anything (spec §2.3 rule 1).
public struct Component: Sendable, Hashable {
    /// `/`: pattern for the URL path.
    public var path: String?
    /// `?`: the whole query, or per query item.
    public var query: QueryPattern?
    /// `#`: pattern for the fragment.
    public var fragment: String?
    /// `exclude`: a match blocks the URL instead of opening the app.
    public var exclude: Bool
    /// `comment`, ignored by matching.
    public var comment: String?
    /// Component-level settings.
    public var settings: MatchingDefaults
    /// The dictionary as written, to show as the deciding rule.
    public var json: JSONValue

    public init(path: String? = nil, query: QueryPattern? = nil, fragment: String? = nil, exclude: Bool = false,
                comment: String? = nil, settings: MatchingDefaults = MatchingDefaults(), json: JSONValue = .null) {
        self.path = path
        self.query = query
        self.fragment = fragment
        self.exclude = exclude
        self.comment = comment
        self.settings = settings
        self.json = json
    }
}

/// The `?` key: a pattern for the whole query string, or patterns per query item name.
public enum QueryPattern: Sendable, Hashable {
    /// Compared with the query without its `?` (empty when the URL has none).
    case whole(String)
    /// Item name → value pattern, in file order. An absent or valueless item is the empty
    /// string; a repeated item must match at every occurrence (spec §2.3 rule 4).
    case items([QueryItemPattern])
}

/// One entry of a dictionary-form `?`.
public struct QueryItemPattern: Sendable, Hashable {
    public var name: String
    public var pattern: String

    public init(name: String, pattern: String) {
        self.name = name
        self.pattern = pattern
    }
}

/// One legacy `paths` string: a path pattern, or an exclusion when written `NOT pattern`.
/// Only the URL path is compared, case-sensitively; query and fragment are ignored (spec §2.4).
public struct PathRule: Sendable, Hashable {
    public var pattern: String
    public var isExclusion: Bool

    /// Parses `"NOT /x"` (with the space) as an exclusion of `/x`.
    public init(_ text: String) {
        if text.hasPrefix("NOT ") {
            pattern = String(text.dropFirst(4))
            isExclusion = true
        } else {
            pattern = text
            isExclusion = false
        }
    }

    /// The string as written in the file.
    public var text: String { isExclusion ? "NOT " + pattern : pattern }
}
