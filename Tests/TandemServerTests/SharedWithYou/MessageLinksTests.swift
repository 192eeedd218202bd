import Testing
@testable import TandemServer

/// Links found in message text and their normal form (decisions W2).
@Suite("SharedWithYou message links")
struct MessageLinksTests {
    @Test(arguments: [
        ("see https://example.com/a.", ["https://example.com/a"]),
        ("(https://example.com/b) and http://x.org/?q=1#top!", ["https://example.com/b", "http://x.org/?q=1#top"]),
        ("no links here, example.com or ftp://x.org", []),
        ("<https://example.com/c>", ["https://example.com/c"]),
        ("two: https://a.example/1,https://b.example/2", ["https://a.example/1,https://b.example/2"]),
        ("HTTPS://Example.COM/Path", ["HTTPS://Example.COM/Path"]),
    ])
    func extractsLinksFromText(_ text: String, _ expected: [String]) {
        #expect(MessageLinks.extract(text) == expected)
    }

    @Test(arguments: [
        ("HTTPS://Example.COM/Path?Q=1#F", "https://example.com/Path?Q=1#F", "example.com"),
        ("https://user@Shop.example.com:8443/buy", "https://user@shop.example.com:8443/buy", "shop.example.com"),
        ("http://example.com", "http://example.com", "example.com"),
    ])
    func normalizesSchemeAndAuthorityOnly(_ url: String, _ normalized: String, _ host: String) {
        let result = MessageLinks.normalize(url)
        #expect(result?.url == normalized)
        #expect(result?.host == host)
    }

    @Test(arguments: ["ftp://example.com/x", "https://", "https:///path", "example.com/x", "https://exa mple.com"])
    func refusesWhatIsNotAnHTTPURLWithAHost(_ url: String) {
        #expect(MessageLinks.normalize(url) == nil)
    }
}
