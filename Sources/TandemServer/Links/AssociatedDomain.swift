import TandemCore

/// One `applinks:` entry of an app's associated-domains entitlement: an exact host
/// (`applinks:example.com`) or a wildcard (`applinks:*.example.com`, whose file is fetched from
/// `example.com`). A `?mode=developer` / `?mode=managed` suffix is accepted and ignored.
/// Rules: spec/sharedwithyou-shareplay.md §2.1 ("Per host", "Priority").
struct AssociatedDomain: Sendable, Hashable {
    /// The entry as given, `applinks:*.example.com`.
    var entry: String
    /// The host whose file applies: `example.com` for both forms above.
    var host: String
    var isWildcard: Bool

    /// Parses an entry; `BAD_REQUEST` unless it is `applinks:` and a lowercase-able host name
    /// (letters, digits, `-`, `.`; no port, no path). With `allowPorts` (tests against a local
    /// server) `host:port` is accepted.
    init(_ entry: String, allowPorts: Bool = false) throws {
        guard entry.hasPrefix("applinks:") else {
            throw CloudKitError.badRequest("'\(entry)' is not an applinks entry (expected applinks:example.com or applinks:*.example.com)")
        }
        var host = String(entry.dropFirst("applinks:".count).prefix { $0 != "?" }).lowercased()
        isWildcard = host.hasPrefix("*.")
        if isWildcard { host.removeFirst(2) }
        let allowed = host.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "." || (allowPorts && $0 == ":")
        }
        guard allowed, !host.isEmpty, !host.hasPrefix("."), !host.hasSuffix("."), !host.contains("..") else {
            throw CloudKitError.badRequest("'\(entry)' does not name a host (no ports, paths or wildcards other than a leading '*.')")
        }
        self.host = host
        self.entry = "applinks:" + (isWildcard ? "*." : "") + host
    }

    /// Whether this entry covers `host` (lowercased): the same host, or for a wildcard a
    /// subdomain at any depth. `*.example.com` does not cover `example.com` itself.
    func covers(_ host: String) -> Bool {
        isWildcard ? host.hasSuffix("." + self.host) : host == self.host
    }

    /// The entries covering `host`, in the order a device consults them: the exact host first,
    /// then wildcards from the most specific parent to the least.
    static func candidates(for host: String, in domains: [AssociatedDomain]) -> [AssociatedDomain] {
        let exact = domains.filter { !$0.isWildcard && $0.covers(host) }
        let wildcards = domains.filter { $0.isWildcard && $0.covers(host) }.sorted { $0.host.count > $1.host.count }
        return exact + wildcards
    }
}
