import TandemCore

/// An association file compiled once for matching URLs, safe to share between threads.
///
/// ```swift
/// let matcher = try LinkMatcher(bytes: Array(fileData))
/// matcher.match("https://example.com/buy/shoes", appID: "ABCDE12345.com.example.shop")  // .open(rule)
/// ```
///
/// For one app: its entries in file order; in each, `components` when present (else `paths`)
/// in order; the first rule that matches decides, `exclude` / `NOT` blocking (spec §2.3 rule 3,
/// §2.4). Entries naming other apps are skipped, as on a device where only this app is installed.
public struct LinkMatcher: Sendable {
    private let details: [[CompiledRule]]
    private let detailsByApp: [String: [Int]]
    /// Every app ID the file's `applinks` names, in file order.
    public let appIDs: [String]

    public init(_ file: AssociationFile) {
        let links = file.applinks ?? AppLinks()
        var details: [[CompiledRule]] = []
        var byApp: [String: [Int]] = [:]
        var appIDs: [String] = []
        for (index, detail) in links.details.enumerated() {
            let settings = detail.defaults.over(links.defaults)
            var rules: [CompiledRule] = []
            if let components = detail.components {
                for (position, component) in components.enumerated() {
                    let rule = LinkRule(detail: index, kind: .component(position), text: JSONWriter.string(component.json))
                    rules.append(CompiledRule(component, rule: rule, settings: settings, variables: links.substitutionVariables))
                }
            } else if let paths = detail.paths {
                for (position, path) in paths.enumerated() {
                    let rule = LinkRule(detail: index, kind: .path(position), text: JSONWriter.string(.string(path.text)))
                    rules.append(CompiledRule(path, rule: rule))
                }
            }
            details.append(rules)
            for appID in detail.appIDs {
                if byApp[appID] == nil { appIDs.append(appID) }
                byApp[appID, default: []].append(index)
            }
        }
        self.details = details
        self.detailsByApp = byApp
        self.appIDs = appIDs
    }

    /// Parses and compiles a file. Throws what `AssociationFile.parse` throws.
    public init(bytes: [UInt8]) throws(AssociationFileError) {
        self.init(try AssociationFile.parse(bytes))
    }

    /// The decision for `url` and the app `appID` (`APPIDPREFIX.bundle.id`, compared exactly).
    public func match(_ url: LinkURL, appID: String) -> LinkDecision {
        guard let indices = detailsByApp[appID] else { return .noMatch }
        var views = URLViews(url)
        for index in indices {
            for rule in details[index] where rule.matches(&views) {
                return rule.exclude ? .blocked(rule.rule) : .open(rule.rule)
            }
        }
        return .noMatch
    }

    /// `match(LinkURL(url), appID:)`.
    public func match(_ url: String, appID: String) -> LinkDecision {
        match(LinkURL(url), appID: appID)
    }
}
