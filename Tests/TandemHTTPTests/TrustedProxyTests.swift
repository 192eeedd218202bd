import Testing
import TandemHTTP

/// `X-Forwarded-For` names the client only when the TCP peer is a trusted proxy (N67).
@Suite("Trusted proxies")
struct TrustedProxyTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var description: String
        var trusted: [String]
        var peer: String
        var forwardedFor: String?
        var client: String
        var testDescription: String { description }
    }

    static let cases: [Case] = [
        Case(description: "no trusted proxies: the header is ignored", trusted: [], peer: "10.0.0.2", forwardedFor: "203.0.113.7", client: "10.0.0.2"),
        Case(description: "an untrusted peer's header is ignored", trusted: ["10.0.0.0/8"], peer: "192.0.2.1", forwardedFor: "203.0.113.7", client: "192.0.2.1"),
        Case(description: "a trusted peer without the header is the client", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: nil, client: "10.0.0.2"),
        Case(description: "one proxy", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "203.0.113.7", client: "203.0.113.7"),
        Case(description: "what the client wrote left of the proxy's entry is not read", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "198.51.100.1, 203.0.113.7", client: "203.0.113.7"),
        Case(description: "a chain of trusted proxies is walked", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "198.51.100.1, 203.0.113.7, 10.1.1.1,10.2.2.2", client: "203.0.113.7"),
        Case(description: "every entry trusted: the leftmost", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "10.9.9.9, 10.1.1.1", client: "10.9.9.9"),
        Case(description: "a word stops the walk at the proxy that wrote it", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "203.0.113.7, unknown", client: "10.0.0.2"),
        Case(description: "garbage stops the walk", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "<script>", client: "10.0.0.2"),
        Case(description: "an empty header", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "", client: "10.0.0.2"),
        Case(description: "an IPv4 entry with a port", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "203.0.113.7:4711", client: "203.0.113.7"),
        Case(description: "an IPv6 entry", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "2001:db8::7", client: "2001:db8::7"),
        Case(description: "an IPv6 entry in brackets with a port", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "[2001:db8::7]:4711", client: "2001:db8::7"),
        Case(description: "an IPv4-mapped entry is its IPv4 address", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "::ffff:203.0.113.7", client: "203.0.113.7"),
        Case(description: "an IPv4-mapped entry of a trusted proxy is trusted", trusted: ["10.0.0.0/8"], peer: "10.0.0.2",
             forwardedFor: "203.0.113.7, ::ffff:10.1.1.1", client: "203.0.113.7"),
        Case(description: "an IPv6 proxy", trusted: ["fd00::/8"], peer: "fd00::1", forwardedFor: "203.0.113.7", client: "203.0.113.7"),
        Case(description: "an IPv4 block does not trust IPv6 peers", trusted: ["0.0.0.0/0"], peer: "fd00::1", forwardedFor: "203.0.113.7", client: "fd00::1"),
        Case(description: "the text is normalised", trusted: ["10.0.0.0/8"], peer: "10.0.0.2", forwardedFor: "2001:DB8:0:0::7", client: "2001:db8::7"),
    ]

    @Test(arguments: cases)
    func theClientIsTheFirstAddressThatIsNotATrustedProxy(_ c: Case) {
        let proxies = TrustedProxies(c.trusted.map { AddressRange($0)! })
        #expect(proxies.client(peer: c.peer, forwardedFor: c.forwardedFor) == c.client)
    }

    @Test(arguments: [
        ("203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2:aaaa::1", "2001:db8:1:2::/64"),
        ("2001:DB8:1:2::ffff", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.1", "198.51.100.1"),
        ("::1", "::/64"),
        ("not an address", "not an address"),
    ])
    func limitsCountAnIPv6ClientByItsSlash64(address: String, key: String) {
        #expect(IPAddress.limitKey(address) == key)
    }

    /// Over a real connection: repeated headers are one list, in order.
    @Test(arguments: [true, false])
    func theServerReadsTheHeaderOnlyFromATrustedPeer(trusted: Bool) throws {
        let server = try startServer { if trusted { $0.trustedProxies = TrustedProxies([AddressRange("127.0.0.0/8")!]) } }
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /where HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.1\r\nX-Forwarded-For: 203.0.113.7, 127.0.0.1\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.headers["x-remote"] == (trusted ? "203.0.113.7" : "127.0.0.1"))
        // The header itself reaches the responder unchanged, either way.
        #expect(response.headers["x-echo-x-forwarded-for"]?.split(separator: ",").map { String($0.drop { $0 == " " }) }
                == ["198.51.100.1", "203.0.113.7", "127.0.0.1"])
    }
}
