import Testing
@testable import TandemServer
import TandemHTTP

/// The outbound-address rule over every spelling of an internal address an attacker might
/// use: the URL is resolved by the system resolver and each address judged as bytes.
@Suite struct OutboundRuleTests {
    /// (URL, the word the refusal must contain; nil: allowed)
    static let withoutAllowList: [(String, String?)] = [
        // The metadata address, spelled every way the resolver reads it.
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://2852039166/", "link-local"),
        ("https://0xA9FEA9FE/", "link-local"),
        ("https://0xa9.0xfe.0xa9.0xfe/", "link-local"),
        ("https://0251.0376.0251.0376/", "link-local"),
        ("https://169.254.43518/", "link-local"),
        ("https://[::ffff:169.254.169.254]/", "link-local"),
        ("https://[::ffff:a9fe:a9fe]/", "link-local"),
        ("https://[::169.254.169.254]/", "link-local"),
        ("https://[64:ff9b::a9fe:a9fe]/", "link-local"),
        ("https://[2002:a9fe:a9fe::1]/", "link-local"),
        // Unspecified and loopback.
        ("https://0/", "unspecified"),
        ("https://0.0.0.0/", "unspecified"),
        ("https://[::0]/", "unspecified"),
        ("https://[::]/", "unspecified"),
        ("https://127.0.0.1/", "loopback"),
        ("https://127.1/", "loopback"),
        ("https://2130706433/", "loopback"),
        ("https://0x7f000001:8443/", "loopback"),
        ("https://017700000001/", "loopback"),
        ("https://localhost/", "loopback"),
        ("https://[::1]/", "loopback"),
        ("https://[::ffff:127.0.0.1]/", "loopback"),
        ("https://[0:0:0:0:0:ffff:7f00:1]/", "loopback"),
        ("http://127.0.0.1:8080/hook", "loopback"),
        // Private, shared, multicast, broadcast, reserved, documentation.
        ("https://10.1.2.3/", "private"),
        ("https://172.16.5.4/", "private"),
        ("https://172.31.255.255/", "private"),
        ("https://192.168.0.1/", "private"),
        ("https://100.64.0.1/", "shared address space"),
        ("https://224.0.0.1/", "multicast"),
        ("https://255.255.255.255/", "broadcast"),
        ("https://240.0.0.1/", "reserved"),
        ("https://192.0.2.10/", "documentation"),
        ("https://198.18.0.1/", "benchmarking"),
        ("https://[fd00::1]/", "unique-local"),
        ("https://[fc00::1]/", "unique-local"),
        ("https://[fe80::1]/", "link-local"),
        ("https://[fec0::1]/", "site-local"),
        ("https://[ff02::1]/", "multicast"),
        ("https://[2001:db8::1]/", "documentation"),
        ("https://[2001::1]/", "IETF"),
        ("https://[100::1]/", "outside IPv6 global unicast"),
        ("https://[::ffff:93.184.216.34]/", "IPv4-mapped"),
        // Plain http to a public address needs the operator's permission too.
        ("http://93.184.216.34/hook", "plain http"),
        // Public addresses over https.
        ("https://93.184.216.34/hook", nil),
        ("https://8.8.8.8:8443/hook?x=1", nil),
        ("https://[2606:4700:4700::1111]/hook", nil),
        ("https://[64:ff9b::5db8:d822]/", nil),
        ("https://[2002:5db8:d822::1]/", nil),
        // Not a URL the server fetches at all.
        ("ftp://93.184.216.34/", "only http:// and https://"),
        ("https://user@93.184.216.34/", "user info"),
        ("https://93.184.216.34:0/", "port"),
        ("https://93.184.216.34:65536/", "port"),
        ("https://[::1/", "unclosed"),
        ("https:///path", "no host"),
    ]

    @Test(arguments: withoutAllowList)
    func addressRule(url: String, refusal: String?) {
        let outcome = Result { () throws(OutboundError) in try OutboundTarget.resolve(url, rule: OutboundRule()) }
        switch (outcome, refusal) {
        case (.success, nil):
            break
        case (.success(let target), let word?):
            Issue.record("\(url) was allowed (\(target.addresses)); expected a refusal naming '\(word)'")
        case (.failure(let error), nil):
            Issue.record("\(url) was refused: \(error)")
        case (.failure(let error), let word?):
            #expect(error.description.contains(word), "\(url): \(error)")
        }
    }

    /// `--webhook-allow` opens exactly its block, over http too, in any spelling that reaches it.
    static let withLoopbackOpened: [(String, Bool)] = [
        ("http://127.0.0.1:8080/hook", true),
        ("http://127.1:8080/hook", true),
        ("https://2130706433/", true),
        ("http://[::ffff:127.0.0.1]:8080/", true),
        ("http://[::1]:8080/", false),
        ("http://10.0.0.1/", false),
        ("https://169.254.169.254/", false),
        ("http://93.184.216.34/", false),
        ("https://93.184.216.34/", true),
    ]

    @Test(arguments: withLoopbackOpened)
    func allowList(url: String, allowed: Bool) {
        let rule = OutboundRule(allowed: [AddressRange("127.0.0.0/8")!])
        let outcome = Result { () throws(OutboundError) in try OutboundTarget.resolve(url, rule: rule) }
        if case .success = outcome { #expect(allowed, "\(url) was allowed") } else { #expect(!allowed, "\(url): \(outcome)") }
    }

    @Test(arguments: [
        ("127.0.0.0/8", true), ("::1/128", true), ("::1", true), ("10.0.0.0/8", true), ("0.0.0.0/0", true), ("fc00::/7", true),
        ("127.0.0.1/8", false), ("10.0.0.0/33", false), ("2130706433/32", false), ("0x7f.0.0.1/32", false), ("127.1/32", false),
        ("::1/129", false), ("10.0.0.0/", false), ("", false), ("localhost", false),
    ])
    func allowListBlocksParseStrictly(text: String, valid: Bool) {
        #expect((AddressRange(text) != nil) == valid, "\(text)")
    }
}
