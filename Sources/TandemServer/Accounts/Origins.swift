import Foundation

/// Web origins (`scheme://host[:port]`, RFC 6454) as API tokens list them and the sign-in page
/// and CORS compare them (decisions A8, A42).
///
/// Read by hand rather than through `URLComponents`, whose idea of a host is wider than an
/// origin's (it takes `*`, percent escapes and an empty port): what is accepted here is exactly
/// what a browser sends in `Origin`.
public enum Origins {
    /// The origin of `text` in canonical form (lower-case scheme and host, default port left
    /// out), or nil when it is not one: the scheme must be `http` or `https`; the host a DNS name
    /// (letters, digits, `-`, dot-separated labels of 1–63), an IPv4 address or a bracketed IPv6
    /// address; the port, when given, 1–65535. A path (other than a lone trailing `/`), a query,
    /// a fragment, credentials (`user@`), a wildcard (`*`), spaces or escapes make it not one.
    public static func normalize(_ text: String) -> String? {
        guard let (scheme, rest) = scheme(of: text) else { return nil }
        let authority = rest.hasSuffix("/") ? String(rest.dropLast()) : rest
        return origin(scheme: scheme, authority: authority)
    }

    /// The origin of an http(s) URL (any path and query), or nil when it is not one or carries
    /// credentials (`user@`).
    public static func origin(ofURL text: String) -> String? {
        guard let (scheme, rest) = scheme(of: text) else { return nil }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return origin(scheme: scheme, authority: String(authority))
    }

    /// Why `text` is not an origin, for the operator (nil when it is one).
    public static func problem(_ text: String) -> String? {
        guard normalize(text) == nil else { return nil }
        if text.isEmpty { return "'' is not an origin: it is empty (a stray comma?)" }
        if text.contains("*") { return "'\(text)' is not an origin: wildcards are not allowed; list each origin" }
        guard let (_, rest) = scheme(of: text) else { return "'\(text)' is not an origin: it must start with http:// or https://" }
        if rest.contains("@") { return "'\(text)' is not an origin: it must not carry a user name or password" }
        if rest.dropLast(rest.hasSuffix("/") ? 1 : 0).contains(where: { "/?#".contains($0) }) {
            return "'\(text)' is not an origin: it must have no path, query or fragment (just scheme://host[:port])"
        }
        return "'\(text)' is not an origin: give scheme://host[:port] with a valid host name and a port of 1-65535, e.g. https://app.example"
    }

    /// `(scheme, rest after "://")` for http and https, lower-cased scheme.
    private static func scheme(of text: String) -> (String, String)? {
        guard let range = text.range(of: "://") else { return nil }
        let scheme = text[..<range.lowerBound].lowercased()
        guard scheme == "http" || scheme == "https" else { return nil }
        return (scheme, String(text[range.upperBound...]))
    }

    private static func origin(scheme: String, authority: String) -> String? {
        var host = Substring(authority.lowercased())
        var port: Int?
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let inside = host[host.index(after: host.startIndex)..<close]
            guard inside.filter({ $0 == ":" }).count >= 2, inside.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) || $0 == ":" || $0 == "." }) else { return nil }
            let after = host[host.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let value = number(after.dropFirst()) else { return nil }
                port = value
            }
            host = host[...close]
        } else {
            if let colon = host.lastIndex(of: ":") {
                guard let value = number(host[host.index(after: colon)...]) else { return nil }
                port = value
                host = host[..<colon]
            }
            guard !host.isEmpty, host.count <= 253 else { return nil }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            guard labels.allSatisfy({ label in
                !label.isEmpty && label.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
            }) else { return nil }
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let shown = port.flatMap { $0 == defaultPort ? nil : $0 }
        return "\(scheme)://\(host)" + (shown.map { ":\($0)" } ?? "")
    }

    /// A port: 1–5 ASCII digits, 1–65535.
    private static func number(_ text: Substring) -> Int? {
        guard (1...5).contains(text.count), text.allSatisfy({ ("0"..."9").contains($0) }), let value = Int(text), (1...65535).contains(value) else {
            return nil
        }
        return value
    }
}
