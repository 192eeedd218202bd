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
///
/// Cost: a match allocates nothing for URLs up to a few hundred bytes; each rule is a few
/// comparisons unless its literal text could be in the URL (see `Bigrams`).
public struct LinkMatcher: Sendable {
    private let program: MatchProgram
    private let rules: [CompiledRule]
    private let items: [CompiledRule.Item]
    /// What each rule reports when it decides.
    private let decisions: [LinkRule]
    /// Rule index range of each `details` entry.
    private let detailRules: [Range<Int>]
    /// Entries of each app (`appDetails[appEntries[app]]`), apps in `appIDs` order.
    private let appEntries: [Range<Int>]
    private let appDetails: [Int]
    private let appIndex: [String: Int]
    /// Every app ID the file's `applinks` names, in file order.
    public let appIDs: [String]

    public init(_ file: AssociationFile) {
        let links = file.applinks ?? AppLinks()
        var builder = PatternBuilder()
        var rules: [CompiledRule] = []
        var items: [CompiledRule.Item] = []
        var decisions: [LinkRule] = []
        var detailRules: [Range<Int>] = []
        var byApp: [String: [Int]] = [:]
        var appIDs: [String] = []
        for (index, detail) in links.details.enumerated() {
            let settings = detail.defaults.over(links.defaults)
            let first = rules.count
            if let components = detail.components {
                for (position, component) in components.enumerated() {
                    decisions.append(LinkRule(detail: index, kind: .component(position), text: JSONWriter.string(component.json)))
                    rules.append(CompiledRule(component, settings: settings, variables: links.substitutionVariables,
                                              builder: &builder, items: &items))
                }
            } else if let paths = detail.paths {
                for (position, path) in paths.enumerated() {
                    decisions.append(LinkRule(detail: index, kind: .path(position), text: JSONWriter.string(.string(path.text))))
                    rules.append(CompiledRule(path, builder: &builder))
                }
            }
            detailRules.append(first..<rules.count)
            for appID in detail.appIDs {
                if byApp[appID] == nil { appIDs.append(appID) }
                byApp[appID, default: []].append(index)
            }
        }
        var appEntries: [Range<Int>] = []
        var appDetails: [Int] = []
        for appID in appIDs {
            let start = appDetails.count
            appDetails += byApp[appID] ?? []
            appEntries.append(start..<appDetails.count)
        }
        program = MatchProgram(builder)
        self.rules = rules
        self.items = items
        self.decisions = decisions
        self.detailRules = detailRules
        self.appEntries = appEntries
        self.appDetails = appDetails
        self.appIndex = Dictionary(uniqueKeysWithValues: appIDs.enumerated().map { ($1, $0) })
        self.appIDs = appIDs
    }

    /// Parses and compiles a file. Throws what `AssociationFile.parse` throws.
    public init(bytes: [UInt8]) throws(AssociationFileError) {
        self.init(try AssociationFile.parse(bytes))
    }

    /// The decision for `url` and the app `appID` (`APPIDPREFIX.bundle.id`, compared exactly).
    public func match(_ url: LinkURL, appID: String) -> LinkDecision {
        guard let app = app(appID) else { return .noMatch }
        let (path, query, fragment) = (url.path.utf8, url.query.utf8, url.fragment.utf8)
        // Copied side by side into one buffer: LinkURL's parts are ASCII already.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: path.count + query.count + fragment.count) { memory in
            var cursor = 0
            func place(_ part: String.UTF8View) -> UnsafeBufferPointer<UInt8> {
                let start = cursor
                for byte in part {
                    memory[cursor] = byte
                    cursor += 1
                }
                return UnsafeBufferPointer(rebasing: memory[start..<cursor])
            }
            return decide(app, URLBytes(path: place(path), query: place(query), fragment: place(fragment)))
        }
    }

    /// The decision for URL text (`https://host/path?query#fragment`, or a bare path).
    public func match(_ url: String, appID: String) -> LinkDecision {
        guard let app = app(appID) else { return .noMatch }
        let fast = url.utf8.withContiguousStorageIfAvailable { text in URLBytes(splitting: text).map { decide(app, $0) } }
        if let decision = fast ?? nil { return decision }
        return match(LinkURL(url), appID: appID)
    }

    private func app(_ appID: String) -> Int? {
        // A file names few apps: comparing strings beats hashing one.
        if appIDs.count <= 8 { return appIDs.firstIndex(of: appID) }
        return appIndex[appID]
    }

    private func decide(_ app: Int, _ url: URLBytes) -> LinkDecision {
        guard let index = firstMatch(app, url) else { return .noMatch }
        return rules[index].exclude ? .blocked(decisions[index]) : .open(decisions[index])
    }

    /// The index of the first of `app`'s rules that matches `url`.
    private func firstMatch(_ app: Int, _ url: URLBytes) -> Int? {
        let capacity = URLForm.capacity(for: url)
        return withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 4 * capacity) { memory in
            // The forms rules need, each written once (into its quarter of `memory`) and then
            // read in place: a form is too large to copy for every rule. Forms hold only pointers
            // and numbers, so they need no deinitialization.
            withUnsafeTemporaryAllocation(of: URLForm.self, capacity: 4) { forms in
                program.withMachine { machine in
                    rules.withUnsafeBufferPointer { rules in
                        items.withUnsafeBufferPointer { items in
                            var built = 0
                            for detail in appDetails[appEntries[app]] {
                                for index in detailRules[detail] {
                                    let rule = rules[index]
                                    let slot = (rule.encoded ? 0 : 2) + (rule.folded ? 1 : 0)
                                    if built & (1 << slot) == 0 {
                                        built |= 1 << slot
                                        (forms.baseAddress! + slot).initialize(to: URLForm(
                                            url, encoded: slot < 2, folded: slot & 1 == 1, memory: memory.baseAddress! + slot * capacity))
                                    }
                                    if rule.matches(forms.baseAddress! + slot, machine, items) { return index }
                                }
                            }
                            return nil
                        }
                    }
                }
            }
        }
    }
}
