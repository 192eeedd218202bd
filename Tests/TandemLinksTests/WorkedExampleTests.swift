import Testing
import TandemLinks

/// The worked examples of spec §2.5, each as written there.
@Suite struct WorkedExampleTests {
    static let food = #""substitutionVariables": {"food": ["pizza", "sushi"]}"#

    static let cases: [(label: String, file: [UInt8], url: String, expected: String)] = [
        ("query and fragment default to *", Fixtures.components(#"[{"/": "/buy/*"}]"#), "/buy/shoes?x=1#top", "open"),
        ("case-sensitive by default", Fixtures.components(#"[{"/": "/buy/*"}]"#), "/Buy/shoes", "no match"),
        ("caseSensitive false", Fixtures.components(#"[{"/": "/buy/*", "caseSensitive": false}]"#), "/Buy/shoes", "open"),
        ("?* needs one character", Fixtures.components(#"[{"/": "/p/?*"}]"#), "/p/", "no match"),
        ("* crosses /", Fixtures.components(#"[{"/": "/p/*"}]"#), "/p/a/b/c", "open"),
        ("* may be empty but slashes remain", Fixtures.components(#"[{"/": "/p/*/edit"}]"#), "/p/edit", "no match"),
        ("string query is the whole query", Fixtures.components(#"[{"/": "/item", "?": "id=7"}]"#), "/item?id=7", "open"),
        ("absent query is the empty string", Fixtures.components(#"[{"/": "/item", "?": "id=7"}]"#), "/item", "no match"),
        ("item value of exactly 4", Fixtures.components(#"[{"/": "/help/*", "?": {"n": "????"}}]"#), "/help/a?n=1234", "open"),
        ("item value of 2", Fixtures.components(#"[{"/": "/help/*", "?": {"n": "????"}}]"#), "/help/a?n=12", "no match"),
        ("absent item", Fixtures.components(#"[{"/": "/help/*", "?": {"n": "????"}}]"#), "/help/a", "no match"),
        ("every repeated item must match", Fixtures.components(#"[{"/": "/help/*", "?": {"n": "????"}}]"#), "/help/a?n=1234&n=99", "no match"),
        ("exclude with * item blocks everything",
         Fixtures.components(#"[{"?": {"debug": "*"}, "exclude": true}, {"/": "*"}]"#), "/anything", "blocked"),
        ("coupon: excluded first", Fixtures.components(#"[{"/": "/c/1???", "exclude": true}, {"/": "/c/????"}]"#), "/c/1234", "blocked"),
        ("coupon: others open", Fixtures.components(#"[{"/": "/c/1???", "exclude": true}, {"/": "/c/????"}]"#), "/c/2234", "open"),
        ("lang, region and a custom variable",
         Fixtures.components(#"[{"/": "/$(lang)_$(region)/$(food)/"}]"#, extra: food), "/en_US/pizza/", "open"),
        ("xx is not a language",
         Fixtures.components(#"[{"/": "/$(lang)_$(region)/$(food)/"}]"#, extra: food), "/xx_US/pizza/", "no match"),
        ("Canada excluded",
         Fixtures.components(#"[{"/": "/$(lang)_CA/$(food)/", "exclude": true}, {"/": "/$(lang)_$(region)/$(food)/"}]"#, extra: food),
         "/fr_CA/sushi/", "blocked"),
        ("legacy NOT after a catch-all", Fixtures.paths(#"["/*", "NOT /settings/*"]"#), "/settings/x", "open"),
    ]

    @Test(arguments: cases.map(\.label))
    func workedExample(label: String) throws {
        let example = Self.cases.first { $0.label == label }!
        #expect(try Fixtures.verdict(example.file, example.url) == example.expected)
    }

    /// Apple's components doc: `/` = `abc`, `?` = `def`. By D25 the pattern is compared as
    /// written, so without a leading slash it matches no URL path.
    @Test func pathPatternWithoutLeadingSlashMatchesNothing() throws {
        let file = Fixtures.components(##"[{"/": "abc", "?": "def", "#": "*"}]"##)
        #expect(try Fixtures.verdict(file, "https://www.example.com/abc?def") == "no match")
        let fixed = Fixtures.components(##"[{"/": "/abc", "?": "def", "#": "*"}]"##)
        #expect(try Fixtures.verdict(fixed, "https://www.example.com/abc?def") == "open")
        #expect(try Fixtures.verdict(fixed, "https://www.example.com/abc") == "no match")
        #expect(try Fixtures.verdict(fixed, "https://www.example.com/?def") == "no match")
    }

    /// D25: wildcards are literal, so `/test/*` needs the slash.
    @Test func trailingStarDoesNotMatchTheBarePrefix() throws {
        let file = Fixtures.components(#"[{"/": "/test/*"}]"#)
        #expect(try Fixtures.verdict(file, "https://example.com/test") == "no match")
        #expect(try Fixtures.verdict(file, "https://example.com/test/") == "open")
    }
}
