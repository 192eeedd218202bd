import Foundation
import TandemLinks

/// The association files of `Fixtures/aasa` (copied from the project's shared fixtures) and
/// small files built in tests.
enum Fixtures {
    static func bytes(_ name: String) throws -> [UInt8] {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures/aasa") else {
            throw FixtureMissing(name: name)
        }
        return Array(try Data(contentsOf: url))
    }

    /// A file with one entry for `app` holding `components` (a JSON array) and, optionally,
    /// domain-level `extra` members of `applinks` (`"defaults": {...}`).
    static func components(_ components: String, extra: String = "") -> [UInt8] {
        let members = extra.isEmpty ? "" : extra + ", "
        return Array(#"{"applinks": {\#(members)"details": [{"appIDs": ["\#(app)"], "components": \#(components)}]}}"#.utf8)
    }

    /// A file with one legacy entry for `app`.
    static func paths(_ paths: String) -> [UInt8] {
        Array(#"{"applinks": {"apps": [], "details": [{"appID": "\#(app)", "paths": \#(paths)}]}}"#.utf8)
    }

    static let app = "ABCDE12345.com.example.app"

    /// `open`, `blocked` or `no match` for `url` under `file`.
    static func verdict(_ file: [UInt8], _ url: String, app: String = app) throws -> String {
        switch try LinkMatcher(bytes: file).match(url, appID: app) {
        case .open: "open"
        case .blocked: "blocked"
        case .noMatch: "no match"
        }
    }
}

struct FixtureMissing: Error {
    var name: String
}

/// `Fixtures.components`, short for tables.
func c(_ components: String, extra: String = "") -> [UInt8] {
    Fixtures.components(components, extra: extra)
}
