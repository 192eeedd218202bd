import TandemCore

/// Turns a JSON document into an `AssociationFile`, collecting every problem on the way instead
/// of stopping at the first: `parse` throws the first error, `Linter` reports them all.
///
/// A value of the wrong type where matching depends on it is an error, and the element holding
/// it is left out; an unknown key is a warning and is ignored, as iOS ignores it.
struct AssociationFileReader {
    private(set) var diagnostics: [Diagnostic] = []

    mutating func read(_ root: JSONValue) -> AssociationFile {
        var file = AssociationFile()
        guard let object = root.objectValue else {
            diagnostics.append(Diagnostic(.error, .file, "the file must be a JSON object, found \(root.kindName)"))
            return file
        }
        for (key, value) in object.entries {
            switch key {
            case "applinks": file.applinks = readAppLinks(value, at: key)
            case "webcredentials": file.webcredentials = readSection(value, at: key)
            case "appclips":
                file.appclips = readSection(value, at: key)
                if value["details"] != nil {
                    warn(key + ".details", "appclips supports only an apps array; per-URL details are ignored (spec §2.2)")
                }
            case "activitycontinuation": file.activitycontinuation = readSection(value, at: key)
            default: unknown(key, at: "", known: Keys.file)
            }
        }
        return file
    }

    private mutating func readSection(_ value: JSONValue, at path: String) -> ServiceSection? {
        guard value.objectValue != nil else {
            warn(path, "expected an object, found \(value.kindName)")
            return nil
        }
        let apps = value["apps"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return ServiceSection(apps: apps, json: value)
    }

    private mutating func readAppLinks(_ value: JSONValue, at path: String) -> AppLinks? {
        guard let object = expectObject(value, at: path) else { return nil }
        var links = AppLinks()
        for (key, value) in object.entries {
            let at = path + "." + key
            switch key {
            case "defaults": links.defaults = readDefaults(value, at: at)
            case "substitutionVariables": links.substitutionVariables = readVariables(value, at: at)
            case "details":
                if value.objectValue != nil {
                    error(at, "details must be an array; the dictionary form keyed by app ID is obsolete and ignored since iOS 13 (spec §2.2)")
                } else if let items = expectArray(value, at: at) {
                    for (index, item) in items.enumerated() {
                        if let detail = readDetail(item, at: "\(at)[\(index)]") { links.details.append(detail) }
                    }
                }
            case "apps": break // Required (empty) by iOS ≤ 12, ignored after.
            default: unknown(key, at: path, known: Keys.applinks)
            }
        }
        return links
    }

    private mutating func readDetail(_ value: JSONValue, at path: String) -> Detail? {
        guard let object = expectObject(value, at: path) else { return nil }
        var detail = Detail(appIDs: [])
        var singular: [String] = []
        for (key, value) in object.entries {
            let at = path + "." + key
            switch key {
            case "appIDs": detail.appIDs = expectStrings(value, at: at) ?? []
            case "appID": singular = expectString(value, at: at).map { [$0] } ?? []
            case "components":
                guard let items = expectArray(value, at: at) else { continue }
                detail.components = items.enumerated().compactMap { index, item in readComponent(item, at: "\(at)[\(index)]") }
            case "paths": detail.paths = expectStrings(value, at: at)?.map(PathRule.init)
            case "defaults": detail.defaults = readDefaults(value, at: at)
            default: unknown(key, at: path, known: Keys.detail)
            }
        }
        detail.appIDs += singular.filter { !detail.appIDs.contains($0) }
        return detail
    }

    private mutating func readComponent(_ value: JSONValue, at path: String) -> Component? {
        guard let object = expectObject(value, at: path) else { return nil }
        var component = Component(json: value)
        let errorsBefore = diagnostics.count { $0.severity == .error }
        for (key, value) in object.entries {
            let at = path + "." + key
            switch key {
            case "/": component.path = expectString(value, at: at)
            case "#": component.fragment = expectString(value, at: at)
            case "?":
                if let items = value.objectValue {
                    component.query = .items(items.entries.compactMap { name, pattern in
                        expectString(pattern, at: at + "." + name).map { QueryItemPattern(name: name, pattern: $0) }
                    })
                } else if let whole = value.stringValue {
                    component.query = .whole(whole)
                } else {
                    error(at, "expected a string or an object of strings, found \(value.kindName)")
                }
            case "exclude": component.exclude = expectBool(value, at: at) ?? false
            case "comment":
                if let text = value.stringValue { component.comment = text } else { warn(at, "expected a string, found \(value.kindName)") }
            case "caseSensitive": component.settings.caseSensitive = expectBool(value, at: at)
            case "percentEncoded": component.settings.percentEncoded = expectBool(value, at: at)
            default: unknown(key, at: path, known: Keys.component)
            }
        }
        // A component missing one of its constraints would match more than its author wrote.
        return diagnostics.count { $0.severity == .error } == errorsBefore ? component : nil
    }

    private mutating func readDefaults(_ value: JSONValue, at path: String) -> MatchingDefaults {
        var defaults = MatchingDefaults()
        guard let object = expectObject(value, at: path) else { return defaults }
        for (key, value) in object.entries {
            switch key {
            case "caseSensitive": defaults.caseSensitive = expectBool(value, at: path + "." + key)
            case "percentEncoded": defaults.percentEncoded = expectBool(value, at: path + "." + key)
            default: unknown(key, at: path, known: Keys.defaults)
            }
        }
        return defaults
    }

    private mutating func readVariables(_ value: JSONValue, at path: String) -> [String: [String]] {
        var variables: [String: [String]] = [:]
        guard let object = expectObject(value, at: path) else { return variables }
        for (name, values) in object.entries {
            let at = path + "." + name
            if name.contains(where: { $0 == "$" || $0 == "(" || $0 == ")" }) {
                error(at, "a substitution variable's name may not contain '$', '(' or ')' (spec §2.3 rule 7)")
            } else if let strings = expectStrings(values, at: at) {
                variables[name] = strings
            }
        }
        return variables
    }

    // MARK: Types

    private mutating func expectObject(_ value: JSONValue, at path: String) -> JSONObject? {
        expect(value.objectValue, value, at: path, "an object")
    }

    private mutating func expectArray(_ value: JSONValue, at path: String) -> [JSONValue]? {
        expect(value.arrayValue, value, at: path, "an array")
    }

    private mutating func expectString(_ value: JSONValue, at path: String) -> String? {
        expect(value.stringValue, value, at: path, "a string")
    }

    private mutating func expectBool(_ value: JSONValue, at path: String) -> Bool? {
        expect(value.boolValue, value, at: path, "true or false")
    }

    /// `extracted`, or an error naming what was `expected` and what was found.
    private mutating func expect<T>(_ extracted: T?, _ value: JSONValue, at path: String, _ expected: String) -> T? {
        if extracted == nil { error(path, "expected \(expected), found \(value.kindName)") }
        return extracted
    }

    /// An array of strings; any other element is an error and the whole array is refused, so a
    /// rule is never silently dropped from an ordered list.
    private mutating func expectStrings(_ value: JSONValue, at path: String) -> [String]? {
        guard let array = expectArray(value, at: path) else { return nil }
        var strings: [String] = []
        for (index, item) in array.enumerated() {
            guard let string = item.stringValue else {
                error("\(path)[\(index)]", "expected a string, found \(item.kindName)")
                return nil
            }
            strings.append(string)
        }
        return strings
    }

    // MARK: Findings

    private mutating func error(_ path: String, _ message: String) {
        diagnostics.append(Diagnostic(.error, .value(path), message))
    }

    private mutating func warn(_ path: String, _ message: String) {
        diagnostics.append(Diagnostic(.warning, .value(path), message))
    }

    private mutating func unknown(_ key: String, at path: String, known: [String]) {
        let at = path.isEmpty ? key : path + "." + key
        let suggestion = Keys.suggestion(for: key, among: known).map { "; did you mean \"\($0)\"?" } ?? ""
        warn(at, "unknown key \"\(key)\" is ignored\(suggestion)")
    }
}

/// The keys each object of the file may have (spec §2.2, §2.3).
enum Keys {
    static let file = ["applinks", "webcredentials", "appclips", "activitycontinuation"]
    static let applinks = ["defaults", "substitutionVariables", "details", "apps"]
    static let detail = ["appIDs", "appID", "components", "paths", "defaults"]
    static let component = ["/", "?", "#", "exclude", "comment", "caseSensitive", "percentEncoded"]
    static let defaults = ["caseSensitive", "percentEncoded"]

    /// Misspellings seen in published files, and keys differing only in case.
    static let misspellings = [
        "/*": "/", "path": "/", "query": "?", "fragment": "#", "percentsEncoded": "percentEncoded",
        "substitutionVariable": "substitutionVariables", "component": "components", "detail": "details",
    ]

    static func suggestion(for key: String, among known: [String]) -> String? {
        if let exact = misspellings[key], known.contains(exact) { return exact }
        return known.first { $0.lowercased() == key.lowercased() }
    }
}
