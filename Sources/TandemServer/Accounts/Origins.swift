import Foundation

/// Web origins (`scheme://host[:port]`, RFC 6454) as API tokens list them and the sign-in page
/// compares them.
public enum Origins {
    /// The origin of `text` in canonical form (lower-case scheme and host, default port left
    /// out), or nil when it is not an http(s) origin: a path other than `/`, a query, a fragment
    /// or credentials make it not one.
    public static func normalize(_ text: String) -> String? {
        guard let components = URLComponents(string: text), components.user == nil, components.password == nil,
              components.query == nil, components.fragment == nil, components.path.isEmpty || components.path == "/" else { return nil }
        return origin(components)
    }

    /// The origin of a URL (any path), or nil when it is not an http(s) URL.
    public static func origin(ofURL text: String) -> String? {
        guard let components = URLComponents(string: text), components.user == nil, components.password == nil else { return nil }
        return origin(components)
    }

    private static func origin(_ components: URLComponents) -> String? {
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
              let host = components.host?.lowercased(), !host.isEmpty else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port.flatMap { $0 == defaultPort ? nil : $0 }
        return "\(scheme)://\(host)" + (port.map { ":\($0)" } ?? "")
    }
}
