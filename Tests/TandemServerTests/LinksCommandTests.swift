import Foundation
import TandemTestSupport
import Testing

/// `tandem links check` and `tandem links lint` against files on disk.
@Suite struct LinksCommandTests {
    static let app = "ABCDE12345.com.example.shop"

    func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "aasa-" + UUID().uuidString
        ExitCleanup.removeAtExit(path)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func checkPrintsOneDecisionPerURLWithItsRule() throws {
        let path = try file(#"""
            {"applinks": {"details": [{"appIDs": ["\#(Self.app)"], "components": [
              {"/": "/buy/*", "?": {"debug": "?*"}, "exclude": true},
              {"/": "/buy/*"}]}]}}
            """#)
        let result = try runTandem(["links", "check", path, "--app", Self.app,
                              "https://shop.example.com/buy/shoes", "https://shop.example.com/buy/shoes?debug=1", "https://shop.example.com/help"])
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines == [
            #"open  https://shop.example.com/buy/shoes  applinks.details[0].components[1] {"/":"/buy/*"}"#,
            #"blocked  https://shop.example.com/buy/shoes?debug=1  applinks.details[0].components[0] {"/":"/buy/*","?":{"debug":"?*"},"exclude":true}"#,
            "no match  https://shop.example.com/help",
        ])
    }

    @Test func unparseableFileFailsWithLineAndColumn() throws {
        let path = try file("{\n  \"applinks\": {\"details\": [],}\n}")
        let result = try runTandem(["links", "check", path, "--app", Self.app, "/x"])
        #expect(result.status == 1)
        #expect(result.error.contains("line 2, column"), "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test func checkNotesAnAppTheFileDoesNotName() throws {
        let path = try file(#"{"applinks": {"details": [{"appID": "ZZZZZ99999.other", "paths": ["*"]}]}}"#)
        let result = try runTandem(["links", "check", path, "--app", Self.app, "/x"])
        #expect(result.status == 0)
        #expect(result.output == "no match  /x\n")
        #expect(result.error.contains("no applinks entry for \(Self.app)"))
    }

    @Test func lintListsFindingsAndFailsOnErrors() throws {
        let warnings = try file(#"{"applinks": {"details": [{"appID": "\#(Self.app)", "paths": ["/*", "NOT /settings/*"]}]}}"#)
        let linted = try runTandem(["links", "lint", warnings])
        #expect(linted.status == 0)
        #expect(linted.output.contains("warning applinks.details[0].paths[1]: NOT never applies"), "\(linted.output)")
        let broken = try file(#"{"applinks": {"details": [{"appID": "\#(Self.app)", "paths": [{"/": "/u/*"}]}]}}"#)
        let refused = try runTandem(["links", "lint", broken])
        #expect(refused.status == 1)
        #expect(refused.output.contains("error applinks.details[0].paths[0]: expected a string"))
    }

    @Test func checkWithoutAppIsAUsageError() throws {
        let result = try runTandem(["links", "check", "/nonexistent", "/x"])
        #expect(result.status == 64)
        #expect(result.error.contains("needs --app"))
    }
}
