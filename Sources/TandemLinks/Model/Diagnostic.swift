/// A finding about an association file: a reason it cannot be used (`error`) or a rule that
/// does not do what its author likely meant (`warning`), with where it is.
public struct Diagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }

    public var severity: Severity
    public var location: Location
    public var message: String

    public init(_ severity: Severity, _ location: Location, _ message: String) {
        self.severity = severity
        self.location = location
        self.message = message
    }

    /// `warning applinks.details[0].components[2]: message`
    public var description: String { "\(severity.rawValue) \(location): \(message)" }
}

/// Where in a file a finding is.
///
/// JSON text errors have a line and column (from the JSON parser); findings about values have
/// their JSON path (`applinks.details[1].components[0]`), since a parsed value keeps no position.
public enum Location: Sendable, Hashable, CustomStringConvertible {
    /// The file as a whole (its size, its top-level kind).
    case file
    /// 1-based line and column in the text.
    case text(line: Int, column: Int)
    /// A JSON path from the root.
    case value(String)

    public var description: String {
        switch self {
        case .file: "file"
        case .text(let line, let column): "line \(line), column \(column)"
        case .value(let path): path
        }
    }
}

/// Why an association file cannot be used: malformed JSON (with line and column), over
/// 128 KiB, or a value of the wrong type where matching needs it (with its JSON path).
public struct AssociationFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var location: Location
    public var message: String

    public init(_ location: Location, _ message: String) {
        self.location = location
        self.message = message
    }

    public var description: String { "\(location): \(message)" }
}
