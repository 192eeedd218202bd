import TandemHTTP
import Glibc

/// A URL the server is about to fetch, with the addresses it was checked at.
///
/// `resolve(_:rule:)` splits the URL (`http`/`https` only, no user info, a port of 1–65535),
/// resolves its host with the system resolver (`getaddrinfo`, which also reads numeric
/// spellings such as `2852039166` or `0x7f.1` the way a connection would), and applies
/// `OutboundRule` to every address returned: one refused address refuses the URL, so a name
/// that resolves to a public and a private address cannot be used to reach the private one.
struct OutboundTarget: Sendable {
    var url: String
    var scheme: String
    /// The host as the URL spells it (brackets removed from an IPv6 literal).
    var host: String
    var port: Int
    /// Every address the host resolved to, all allowed; connections go to these only.
    var addresses: [IPAddress]

    /// - Throws: `OutboundError.refused` naming the rule that refused the URL, or the host
    ///   that did not resolve.
    static func resolve(_ url: String, rule: OutboundRule) throws(OutboundError) -> OutboundTarget {
        let (scheme, host, port) = try split(url)
        let addresses = try lookUp(host)
        for address in addresses {
            if let refusal = rule.refusal(address, scheme: scheme) {
                throw .refused("\(url): \(host) resolves to \(address): \(refusal)")
            }
        }
        return OutboundTarget(url: url, scheme: scheme, host: host, port: port, addresses: addresses)
    }

    /// Scheme, host and port of an absolute `http`/`https` URL.
    static func split(_ url: String) throws(OutboundError) -> (scheme: String, host: String, port: Int) {
        guard url.utf8.count <= 2048, url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw .refused("the URL must be printable ASCII without spaces, at most 2048 bytes")
        }
        let lower = url.lowercased()
        let scheme = lower.hasPrefix("https://") ? "https" : lower.hasPrefix("http://") ? "http" : ""
        guard !scheme.isEmpty else { throw .refused("\(url): only http:// and https:// URLs are fetched") }
        let authority = url.dropFirst(scheme.count + 3).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.contains("@"), !authority.contains("\\"), !authority.contains("%") else {
            throw .refused("\(url): user info, backslashes and escapes are not allowed in the host")
        }
        var host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { throw .refused("\(url): unclosed IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw .refused("\(url): malformed authority") }
                portText = after.dropFirst()
            }
            guard IPAddress(numeric: String(host)) != nil else { throw .refused("\(url): malformed IPv6 literal") }
        } else {
            let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count <= 2 else { throw .refused("\(url): malformed authority") }
            host = parts[0]
            portText = parts.count == 2 ? parts[1] : nil
            guard host.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "." || $0 == "-" || $0 == "_" }) else {
                throw .refused("\(url): malformed host")
            }
        }
        guard !host.isEmpty else { throw .refused("\(url): no host") }
        var port = scheme == "https" ? 443 : 80
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
                  let n = Int(portText), (1...65535).contains(n) else { throw .refused("\(url): malformed port") }
            port = n
        }
        return (scheme, String(host), port)
    }

    /// Every address `getaddrinfo` gives for `host` (TCP, IPv4 and IPv6), without duplicates.
    static func lookUp(_ host: String) throws(OutboundError) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let list else {
            throw .refused("\(host) does not resolve (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = list
        while let entry = cursor {
            if let raw = entry.pointee.ai_addr, let address = IPAddress(UnsafePointer(raw)), !addresses.contains(address) {
                addresses.append(address)
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw .refused("\(host) resolves to no IPv4 or IPv6 address") }
        return addresses
    }
}

/// Why an outbound fetch did not happen or did not succeed.
enum OutboundError: Error, CustomStringConvertible {
    /// The outbound-address rule refused the URL (or its host did not resolve).
    case refused(String)
    /// The fetch was attempted and failed (connection, TLS, timeout, size).
    case failed(String)

    var description: String {
        switch self {
        case .refused(let reason), .failed(let reason): reason
        }
    }
}
