import TandemHTTP
/// The one outbound-address rule for every URL the server fetches (webhooks, association
/// files; DESIGN.md §6; docs/decisions.md E1).
///
/// A URL is fetched only if every address its host resolves to is allowed, and then only at
/// an address that was checked (`OutboundClient` pins the connection to it):
/// - an address inside an operator's `--webhook-allow` block is allowed, over `http` or `https`;
/// - otherwise only `https`, and only to a public unicast address: not loopback, private
///   (RFC 1918, CGNAT), link-local, unique-local, site-local, multicast, unspecified,
///   broadcast, reserved, documentation or benchmarking space (the IANA special-purpose
///   registries, RFC 6890). IPv6 outside `2000::/3` is refused whole.
/// - IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4) are judged by
///   the IPv4 address they reach.
///
/// Host spellings (`2852039166`, `0xA9FEA9FE`, `0251.0376.0251.0376`, `[::ffff:a9fe:a9fe]`,
/// `0`) never reach this type as text: the resolver turns them into addresses first.
struct OutboundRule: Sendable {
    /// Blocks the operator opened (`tandem serve --webhook-allow CIDR`, repeatable).
    var allowed: [AddressRange]

    init(allowed: [AddressRange] = []) {
        self.allowed = allowed
    }

    /// Why an address may not be reached; `nil` when it may.
    func refusal(_ address: IPAddress, scheme: String) -> String? {
        if allowed.contains(where: { $0.contains(address) || (address.embeddedIPv4.map($0.contains) ?? false) }) {
            return nil
        }
        if let kind = Self.specialPurpose(address) { return "\(address) is \(kind)" }
        if scheme != "https" { return "plain http is allowed only to addresses opened with --webhook-allow" }
        return nil
    }

    /// What kind of non-public address this is, or `nil` for a public unicast address.
    static func specialPurpose(_ address: IPAddress) -> String? {
        if address.isIPv4 {
            return ipv4Special.first { $0.range.contains(address) }?.kind
        }
        if let kind = ipv6Special.first(where: { $0.range.contains(address) })?.kind {
            return kind
        }
        if let inner = address.embeddedIPv4 {
            if let kind = specialPurpose(inner) { return "\(kind) (IPv4 \(inner) inside)" }
            if sixToFour.contains(address) || nat64.contains(address) { return nil }
            return "an IPv4-mapped or IPv4-compatible form (connect to \(inner) by name instead)"
        }
        return globalUnicast.contains(address) ? nil : "outside IPv6 global unicast (2000::/3)"
    }

    private static let sixToFour = AddressRange("2002::/16")!
    private static let nat64 = AddressRange("64:ff9b::/96")!
    private static let globalUnicast = AddressRange("2000::/3")!

    private static func table(_ rows: [(String, String)]) -> [(range: AddressRange, kind: String)] {
        rows.map { (AddressRange($0.0)!, $0.1) }
    }

    private static let ipv4Special = table([
        ("0.0.0.0/8", "unspecified (\"this network\")"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("100.64.0.0/10", "shared address space (CGNAT, RFC 6598)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation (TEST-NET-1)"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation (TEST-NET-2)"),
        ("203.0.113.0/24", "documentation (TEST-NET-3)"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved or broadcast"),
    ])

    /// Checked before the embedded-IPv4 forms, so `::` and `::1` are named as themselves.
    private static let ipv6Special = table([
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fc00::/7", "unique-local"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local (deprecated)"),
        ("ff00::/8", "multicast"),
        ("2001::/23", "IETF protocol assignments (Teredo, ORCHID, ...)"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
    ])
}
