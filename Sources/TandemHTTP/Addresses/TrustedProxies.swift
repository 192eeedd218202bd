/// The proxies whose `X-Forwarded-For` the server believes, and the client address it reads
/// from them (`HTTPServerConfiguration.trustedProxies`; `tandem serve --trusted-proxy CIDR`).
///
/// Behind a load balancer every request's TCP peer is the balancer, so whatever is counted per
/// client address (failed sign-ins, sign-ups, bodies being received) would be counted for
/// everyone at once. Each proxy appends the peer it heard from to `X-Forwarded-For`
/// (`client, proxy1, proxy2`), but a client can send the header too, with anything in it; only
/// the end written by proxies the operator trusts can be believed.
///
/// The rule (nginx's `real_ip_recursive on`; RFC 7239 §5.2 describes the same list): starting
/// from the TCP peer, while the address in hand is a trusted proxy, step to the entry left of it,
/// reading the list from the right; the first address that is not a trusted proxy is the client.
/// - From a peer that is not a trusted proxy, the header is ignored: the peer is the client.
/// - An entry that is not a numeric address (`unknown`, a name, garbage) stops the walk: the
///   client is the trusted proxy that wrote it.
/// - When every entry is a trusted proxy, the client is the leftmost.
/// - Entries may carry a port (`192.0.2.1:4711`, `[2001:db8::1]:4711`), which is dropped.
///   Repeated headers count as one list, in order (libwebsockets joins them with commas).
public struct TrustedProxies: Sendable, Equatable {
    public let ranges: [AddressRange]

    public init(_ ranges: [AddressRange] = []) { self.ranges = ranges }

    public var isEmpty: Bool { ranges.isEmpty }

    /// The client's address in the numeric form `inet_ntop` writes (IPv4-mapped IPv6 as IPv4),
    /// given the TCP peer's (`peer`, numeric) and the request's `X-Forwarded-For` value, if any.
    public func client(peer: String, forwardedFor: String?) -> String {
        guard !ranges.isEmpty, let forwardedFor, var current = Self.address(peer), trusts(current) else { return peer }
        for entry in forwardedFor.split(separator: ",").reversed() {
            guard let next = Self.address(Self.stripPort(entry)) else { break }
            current = next
            if !trusts(current) { break }
        }
        return current.description
    }

    private func trusts(_ address: IPAddress) -> Bool {
        ranges.contains { $0.contains(address) }
    }

    /// A numeric address, IPv4-mapped IPv6 (`::ffff:192.0.2.1`) read as the IPv4 it carries.
    private static func address(_ text: some StringProtocol) -> IPAddress? {
        guard let address = IPAddress(numeric: String(text)) else { return nil }
        if address.bytes.count == 16, address.bytes[0..<10].allSatisfy({ $0 == 0 }), address.bytes[10] == 0xff, address.bytes[11] == 0xff {
            return IPAddress(bytes: Array(address.bytes[12..<16]))
        }
        return address
    }

    /// `[v6]:port` → `v6`, `[v6]` → `v6`, `v4:port` → `v4`; anything else trimmed only.
    private static func stripPort(_ entry: Substring) -> Substring {
        let trimmed = entry.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()
        var text = Substring(String(trimmed))
        if text.first == "[", let close = text.firstIndex(of: "]") {
            return text[text.index(after: text.startIndex)..<close]
        }
        if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            text = text[..<colon]
        }
        return text
    }
}
