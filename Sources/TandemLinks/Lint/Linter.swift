import TandemCore

/// Reports what is wrong with an association file, and which rules will not do what their
/// author meant, each with its position.
///
/// Errors: malformed JSON (line, column), over 128 KiB, wrong value types. Warnings: unknown
/// keys, rules an earlier rule always beats (including `NOT` after a catch-all), an `exclude`
/// whose query item pattern `*` also matches the item's absence, `paths` mixed with
/// `components`, entries that match nothing, malformed app IDs, `**`, undefined variables,
/// path patterns without a leading `/` (D25), and more (see `RuleChecks`). Rules: spec §2, §2.7.
public enum Linter {
    /// Every finding for a file's bytes, errors first in file order.
    public static func lint(_ bytes: [UInt8]) -> [Diagnostic] {
        let json: JSONValue
        do {
            json = try AssociationFile.readJSON(bytes)
        } catch {
            return [Diagnostic(.error, error.location, error.message)]
        }
        var reader = AssociationFileReader()
        let file = reader.read(json)
        return reader.diagnostics + lint(file)
    }

    /// Findings about an already parsed file's rules (no type or key checks).
    public static func lint(_ file: AssociationFile) -> [Diagnostic] {
        guard let links = file.applinks else { return [] }
        var checks = RuleChecks(variables: links.substitutionVariables)
        checks.checkVariables(at: "applinks.substitutionVariables")
        for (index, detail) in links.details.enumerated() {
            checks.check(detail, settings: detail.defaults.over(links.defaults), at: "applinks.details[\(index)]")
        }
        return checks.diagnostics
    }
}
