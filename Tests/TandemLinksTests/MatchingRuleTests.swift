import Testing
import TandemLinks

/// Each matching rule of spec §2.3 and §2.4, one row per case.
@Suite struct MatchingRuleTests {
    static let sections = #""substitutionVariables": {"sect": ["a*", "b"], "food": ["pizza", "sushi"]}"#

    static let cases: [(label: String, file: [UInt8], url: String, expected: String)] = [
        // Wildcards (rule 2)
        ("? is one character", c(#"[{"/": "/a?c"}]"#), "/abc", "open"),
        ("? is not zero characters", c(#"[{"/": "/a?c"}]"#), "/ac", "no match"),
        ("several stars backtrack", c(#"[{"/": "/a*b*c"}]"#), "/aXbYc", "open"),
        ("several stars in the wrong order", c(#"[{"/": "/a*b*c"}]"#), "/aXcYb", "no match"),
        ("a star may match nothing", c(#"[{"/": "/a*"}]"#), "/a", "open"),
        ("exact pattern", c(#"[{"/": "/home"}]"#), "/home/", "no match"),
        ("** is two stars", c(#"[{"/": "/pr/**"}]"#), "/pr/a/b", "open"),
        // Case (rule 6) and its precedence
        ("domain caseSensitive false", c(#"[{"/": "/buy"}]"#, extra: #""defaults": {"caseSensitive": false}"#), "/BUY", "open"),
        ("component caseSensitive true beats domain false",
         c(#"[{"/": "/buy", "caseSensitive": true}]"#, extra: #""defaults": {"caseSensitive": false}"#), "/BUY", "no match"),
        ("case-insensitive applies to query values", c(#"[{"?": {"q": "abc"}, "caseSensitive": false}]"#), "/?q=ABC", "open"),
        ("case-insensitive applies to variable values",
         c(#"[{"/": "/$(food)", "caseSensitive": false}]"#, extra: sections), "/PIZZA", "open"),
        ("case-sensitive variable values", c(#"[{"/": "/$(food)"}]"#, extra: sections), "/PIZZA", "no match"),
        ("$(upper) under caseSensitive false matches lowercase", c(#"[{"/": "/$(upper)", "caseSensitive": false}]"#), "/a", "open"),
        // Percent encoding (rule 5)
        ("encoded: ? is one byte of an escape", c(#"[{"/": "/caf?"}]"#), "/café", "no match"),
        ("encoded: six ? cover one two-byte character", c(#"[{"/": "/caf??????"}]"#), "/café", "open"),
        ("encoded: escapes written in the pattern", c(#"[{"/": "/caf%C3%A9"}]"#), "/café", "open"),
        ("decoded: ? is one character", c(#"[{"/": "/caf?", "percentEncoded": false}]"#), "/caf%C3%A9", "open"),
        ("decoded: non-ASCII written literally", c(#"[{"/": "/café", "percentEncoded": false}]"#), "/caf%C3%A9", "open"),
        ("domain percentEncoded false", c(#"[{"/": "/café"}]"#, extra: #""defaults": {"percentEncoded": false}"#), "/café", "open"),
        ("decoded query item", c(#"[{"?": {"q": "a b"}, "percentEncoded": false}]"#), "/?q=a%20b", "open"),
        ("+ is not a space", c(#"[{"?": {"q": "a b"}, "percentEncoded": false}]"#), "/?q=a+b", "no match"),
        // Query (rule 4)
        ("valueless item is the empty string", c(#"[{"?": {"flag": ""}}]"#), "/?flag", "open"),
        ("?* requires the item", c(#"[{"?": {"flag": "?*"}}]"#), "/?flag", "no match"),
        ("* matches an absent item", c(#"[{"?": {"flag": "*"}}]"#), "/", "open"),
        ("other items are free", c(#"[{"?": {"a": "1"}}]"#), "/?b=2&a=1", "open"),
        ("every named item must match", c(#"[{"?": {"a": "1", "b": "2"}}]"#), "/?a=1", "no match"),
        ("string query compares everything", c(#"[{"?": "a=1"}]"#), "/?a=1&b=2", "no match"),
        // Fragment
        ("fragment exclusion", c(##"[{"#": "nope", "exclude": true}, {"/": "*"}]"##), "/x#nope", "blocked"),
        ("empty fragment pattern needs no fragment", c(##"[{"/": "/share", "#": ""}]"##), "/share#x", "no match"),
        ("empty fragment pattern, none given", c(##"[{"/": "/share", "#": ""}]"##), "/share", "open"),
        // Variables (rule 7)
        ("$(alpha)", c(#"[{"/": "/$(alpha)"}]"#), "/Q", "open"),
        ("$(alpha) is one character", c(#"[{"/": "/$(alpha)"}]"#), "/QQ", "no match"),
        ("$(upper)", c(#"[{"/": "/$(upper)"}]"#), "/q", "no match"),
        ("$(lower)", c(#"[{"/": "/$(lower)"}]"#), "/q", "open"),
        ("$(alnum)", c(#"[{"/": "/$(alnum)$(alnum)"}]"#), "/a1", "open"),
        ("$(digit)", c(#"[{"/": "/$(digit)"}]"#), "/a", "no match"),
        ("$(xdigit)", c(#"[{"/": "/$(xdigit)$(xdigit)"}]"#), "/fF", "open"),
        ("$(xdigit) refuses g", c(#"[{"/": "/$(xdigit)"}]"#), "/g", "no match"),
        ("$(region) includes UN M.49 codes", c(#"[{"/": "/es_$(region)/"}]"#), "/es_419/", "open"),
        ("$(lang) three-letter code", c(#"[{"/": "/$(lang)/"}]"#), "/fil/", "open"),
        ("$(lang) tries shorter codes too", c(#"[{"/": "/$(lang)x/"}]"#), "/enx/", "open"),
        ("custom values may hold wildcards", c(#"[{"/": "/$(sect)/x"}]"#, extra: sections), "/abc/x", "open"),
        ("custom plain value", c(#"[{"/": "/$(sect)/x"}]"#, extra: sections), "/b/x", "open"),
        ("custom value not listed", c(#"[{"/": "/$(sect)/x"}]"#, extra: sections), "/c/x", "no match"),
        ("names are case-sensitive: undefined is literal", c(#"[{"/": "/$(Food)"}]"#, extra: sections), "/$(Food)", "open"),
        // Order (rule 3)
        ("first match wins", c(#"[{"/": "/a/*"}, {"/": "/a/b", "exclude": true}]"#), "/a/b", "open"),
        ("empty components match nothing", c("[]"), "/", "no match"),
        // URL forms
        ("full URL, host ignored", c(#"[{"/": "/x"}]"#), "https://user@example.com:8443/x?y#z", "open"),
        ("empty path is /", c(#"[{"/": "/"}]"#), "https://example.com", "open"),
        ("empty path with a query", c(#"[{"/": "/", "?": "a"}]"#), "https://example.com?a", "open"),
        // Legacy paths (§2.4)
        ("paths ignore query and fragment", Fixtures.paths(#"["/a"]"#), "/a?x=1#f", "open"),
        ("NOT first blocks", Fixtures.paths(#"["NOT /s/*", "*"]"#), "/s/x", "blocked"),
        ("paths are case-sensitive", Fixtures.paths(#"["/a"]"#), "/A", "no match"),
        ("paths have no variables", Fixtures.paths(#"["/$(digit)"]"#), "/1", "no match"),
    ]

    @Test(arguments: cases.map(\.label))
    func rule(label: String) throws {
        let example = Self.cases.first { $0.label == label }!
        #expect(try Fixtures.verdict(example.file, example.url) == example.expected, "\(label)")
    }

    @Test func componentsTakePrecedenceOverPathsInOneEntry() throws {
        let file = Array(#"{"applinks": {"details": [{"appID": "\#(Fixtures.app)", "paths": ["*"], "components": [{"/": "/x"}]}]}}"#.utf8)
        #expect(try Fixtures.verdict(file, "/y") == "no match")
        #expect(try Fixtures.verdict(file, "/x") == "open")
    }

    @Test func entriesAreTriedInOrderAndOtherAppsAreSkipped() throws {
        let other = "ZZZZZ99999.com.example.other"
        let file = Array(#"""
            {"applinks": {"details": [
              {"appIDs": ["\#(other)"], "components": [{"/": "*", "exclude": true}]},
              {"appIDs": ["\#(Fixtures.app)"], "components": [{"/": "/private/*", "exclude": true}]},
              {"appID": "\#(Fixtures.app)", "components": [{"/": "*"}]}]}}
            """#.utf8)
        let matcher = try LinkMatcher(bytes: file)
        #expect(matcher.match("/private/a", appID: Fixtures.app) == .blocked(LinkRule(detail: 1, kind: .component(0), text: #"{"/":"/private/*","exclude":true}"#)))
        #expect(matcher.match("/public", appID: Fixtures.app).rule?.location == "applinks.details[2].components[0]")
        #expect(matcher.match("/public", appID: other).description.hasPrefix("blocked applinks.details[0].components[0]"))
        #expect(matcher.match("/public", appID: "ABCDE12345.com.example.unknown") == .noMatch)
        #expect(matcher.appIDs == [other, Fixtures.app])
    }

    /// Memoized backtracking: many stars against a long non-matching path stay fast.
    @Test func manyStarsDoNotBacktrackExponentially() throws {
        let file = c(#"[{"/": "/*a*a*a*a*a*a*a*a*a*a*b"}]"#)
        let url = "/" + String(repeating: "a", count: 3000)
        let clock = ContinuousClock()
        var verdict = ""
        let elapsed = try clock.measure { verdict = try Fixtures.verdict(file, url) }
        #expect(verdict == "no match")
        #expect(elapsed < .seconds(2))
    }
}
