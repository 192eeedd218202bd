import Foundation
import TandemLinks

/// `tandem links check` and `tandem links lint`: an association file on disk, judged by
/// TandemLinks exactly as the server judges it.
enum LinksCommand {
    /// Prints one line per URL: `open`, `blocked` or `no match`, the URL, then the deciding
    /// rule. A file that cannot be used prints its error (line and column, or JSON path) on
    /// standard error and returns 1.
    static func check(path: String, appID: String, urls: [String]) throws -> Int32 {
        let matcher: LinkMatcher
        do {
            matcher = try LinkMatcher(bytes: try read(path))
        } catch let error as AssociationFileError {
            CommandLine.fail("\(path): \(error)")
            return 1
        }
        if !matcher.appIDs.contains(appID) {
            CommandLine.fail("note: \(path) has no applinks entry for \(appID) (it names \(matcher.appIDs.isEmpty ? "no app" : matcher.appIDs.joined(separator: ", ")))")
        }
        for url in urls {
            let decision = matcher.match(url, appID: appID)
            switch decision {
            case .open(let rule): print("open  \(url)  \(rule)")
            case .blocked(let rule): print("blocked  \(url)  \(rule)")
            case .noMatch: print("no match  \(url)")
            }
        }
        return 0
    }

    /// Prints every finding (`error …` / `warning …` with its position); returns 1 when there
    /// is an error, 0 otherwise.
    static func lint(path: String) throws -> Int32 {
        let findings = Linter.lint(try read(path))
        if findings.isEmpty { print("\(path): no findings") }
        for finding in findings { print("\(path): \(finding)") }
        return findings.contains { $0.severity == .error } ? 1 : 0
    }

    private static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw UsageError("cannot read \(path)") }
        return Array(data)
    }
}
