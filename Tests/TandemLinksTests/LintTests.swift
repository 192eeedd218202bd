import Testing
import TandemLinks

/// Each linter finding, with where it points.
@Suite struct LintTests {
    static let cases: [(label: String, file: [UInt8], location: String, message: String)] = [
        ("later rule never decides", c(#"[{"/": "/a/*"}, {"/": "/a/b/*"}]"#),
         "applinks.details[0].components[1]", "components[0] matches every URL"),
        ("catch-all path with free query beats everything", c(#"[{"/": "*"}, {"/": "/x", "?": {"q": "1"}}]"#),
         "applinks.details[0].components[1]", "never decides"),
        ("exclude with * item blocks absence", c(#"[{"?": {"debug": "*"}, "exclude": true}, {"/": "*"}]"#),
         "applinks.details[0].components[0].?.debug", "also matches URLs without"),
        ("which also makes every later rule dead", c(#"[{"?": {"debug": "*"}, "exclude": true}, {"/": "*"}]"#),
         "applinks.details[0].components[1]", "never decides"),
        ("NOT after a catch-all", Fixtures.paths(#"["/*", "NOT /settings/*"]"#),
         "applinks.details[0].paths[1]", "NOT never applies"),
        ("mixing paths and components",
         Array(#"{"applinks": {"details": [{"appID": "ABCDE12345.a.b", "paths": ["*"], "components": []}]}}"#.utf8),
         "applinks.details[0]", "mixes paths and components"),
        ("unknown component key with a suggestion", c(#"[{"/*": "/join/"}]"#),
         "applinks.details[0].components[0]./*", "did you mean \"/\""),
        ("unknown detail key in another case", Array(#"{"applinks": {"details": [{"appId": "ABCDE12345.a.b", "paths": ["*"]}]}}"#.utf8),
         "applinks.details[0].appId", "did you mean \"appID\""),
        ("wrong type", Array(#"{"applinks": {"details": [{"appID": "ABCDE12345.a.b", "paths": [{"/": "/u/*"}]}]}}"#.utf8),
         "applinks.details[0].paths[0]", "expected a string, found an object"),
        ("wrong boolean", c(#"[{"/": "/a", "exclude": "yes"}]"#),
         "applinks.details[0].components[0].exclude", "expected true or false"),
        ("obsolete details dictionary", Array(#"{"applinks": {"details": {"ABCDE12345.a.b": {"paths": ["*"]}}}}"#.utf8),
         "applinks.details", "obsolete"),
        ("too large", Array(#"{"applinks": {"details": []}, "x": ""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 131_072) + Array(#""}"#.utf8),
         "file", "128 KiB"),
        ("malformed JSON", Array("{\n  \"applinks\": {,}\n}".utf8), "line 2, column", "not valid JSON"),
        ("trailing comma", Array("{\"applinks\": {\"details\": [],}}".utf8), "line 1, column", "trailing comma"),
        ("comments", Array("{\"applinks\": {} // links\n}".utf8), "line 1, column", "no comments"),
        ("HTML served by mistake", Array("<!DOCTYPE html><html></html>".utf8), "line 1, column", "HTML"),
        ("bad app ID", Array(#"{"applinks": {"details": [{"appID": "com.example.app", "paths": ["*"]}]}}"#.utf8),
         "applinks.details[0]", "is not an app ID"),
        ("no rules", Array(#"{"applinks": {"details": [{"appID": "ABCDE12345.a.b"}]}}"#.utf8),
         "applinks.details[0]", "matches no URL"),
        ("double star", c(#"[{"/": "/pr/**"}]"#), "applinks.details[0].components[0]./", "\"**\" is the same as \"*\""),
        ("undefined variable", c(#"[{"/": "/$(food)"}]"#), "applinks.details[0].components[0]./", "not a defined substitution variable"),
        ("no leading slash", c(#"[{"/": "abc"}]"#), "applinks.details[0].components[0]./", "does not start with \"/\""),
        ("non-ASCII with percentEncoded", c(#"[{"/": "/café"}]"#), "applinks.details[0].components[0]./", "non-ASCII"),
        ("fragment in a legacy path", Fixtures.paths(#"["/#/settings"]"#), "applinks.details[0].paths[0]", "\"#\" part"),
        ("appclips with details", Array(#"{"appclips": {"apps": [], "details": []}}"#.utf8), "appclips.details", "only an apps array"),
    ]

    @Test(arguments: cases.map(\.label))
    func finding(label: String) {
        let example = Self.cases.first { $0.label == label }!
        let findings = Linter.lint(example.file)
        let hit = findings.first { "\($0.location)".hasPrefix(example.location) && $0.message.contains(example.message) }
        #expect(hit != nil, "\(findings)")
    }

    static let clean: [(label: String, file: [UInt8])] = [
        ("ordered exclusions", c(#"[{"/": "/c/1???", "exclude": true}, {"/": "/c/????"}]"#)),
        ("NOT first", Fixtures.paths(#"["NOT /settings/*", "/*"]"#)),
        ("?* in an exclusion", c(#"[{"?": {"debug": "?*"}, "exclude": true}, {"/": "*"}]"#)),
        ("narrower rule first", c(#"[{"/": "/a/b/*"}, {"/": "/a/*"}]"#)),
        ("case-sensitive rule does not hide a case-insensitive one", c(#"[{"/": "/a/*"}, {"/": "/A/*", "caseSensitive": false}]"#)),
    ]

    @Test(arguments: clean.map(\.label))
    func cleanFileHasNoFindings(label: String) {
        let example = Self.clean.first { $0.label == label }!
        #expect(Linter.lint(example.file) == [])
    }
}
