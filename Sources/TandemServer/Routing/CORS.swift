import TandemCore
import TandemHTTP
import TandemStore

/// Cross-origin access for browser apps served from another origin (decisions J10).
///
/// CloudKit JS `fetch`es the API with `content-type: text/plain` (a "simple" request: no
/// preflight, but its answer is readable only with `Access-Control-Allow-Origin`); an asset
/// upload POSTs a Blob, which is preflighted.
///
/// - API paths (`/database/1/`, `/device/1/`, `/tandem/1/`, `/auth/1/`): when the request has an
///   `Origin` and its `ckAPIToken` is the container's API token listing that origin (decisions
///   A8), the origin is echoed with `Vary: Origin`; any other origin gets no allow header (the
///   browser then withholds the answer). Never `*`.
/// - Capability URLs (`/webcourier/1/`, `/upload/1/`, signed `/assets/1/` download URLs and
///   `/avatars/1/` URLs, A48): `*`,
///   since the URL itself is the credential.
/// - `OPTIONS` on those paths is a preflight: `204` with `Access-Control-Allow-Methods: GET, POST`,
///   `Access-Control-Allow-Headers: content-type, range` plus the three server-to-server
///   headers, `Access-Control-Max-Age: 600`; it never reaches a handler.
/// - Every answer carrying an allow header exposes `X-Apple-CloudKit-Web-Auth-Token` (CloudKit JS
///   reads it for session rotation).
enum CORS {
    static let allowMethods = "GET, POST"
    static let allowHeaders = "content-type, range, x-apple-cloudkit-request-keyid, x-apple-cloudkit-request-iso8601date, "
        + "x-apple-cloudkit-request-signaturev1"
    static let exposeHeaders = "X-Apple-CloudKit-Web-Auth-Token"
    static let maxAgeSeconds = 600
    static let apiPrefixes = ["/database/1/", "/device/1/", "/tandem/1/", AccountRoutes.prefix]

    /// Whom a path answers across origins.
    enum Audience: Equatable {
        /// The origins the API token of this container lists.
        case apiToken(container: String)
        /// Any origin (`*`).
        case anyone
        /// No CORS headers.
        case none
    }

    static func audience(_ head: HTTPRequestHead) -> Audience {
        let path = head.path
        if path.hasPrefix(WebCourier.prefix) || path.hasPrefix(AssetRoutes.uploadPrefix) { return .anyone }
        if path.hasPrefix(AssetRoutes.downloadPrefix) || path.hasPrefix(AvatarRoutes.downloadPrefix) {
            return QueryString.parse(head.query)["s"] != nil ? .anyone : .none
        }
        guard apiPrefixes.contains(where: { path.hasPrefix($0) }) else { return .none }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        guard segments.count > 3 else { return .none }
        return .apiToken(container: String(segments[3]))
    }

    /// The headers that let the request's origin read the answer (empty when it may not, or the
    /// request is not cross-origin).
    static func headers(for head: HTTPRequestHead, authenticator: Authenticator) -> [(String, String)] {
        guard let origin = head.headers["origin"], !origin.isEmpty else { return [] }
        switch audience(head) {
        case .none:
            return []
        case .anyone:
            return [("access-control-allow-origin", "*"), ("access-control-expose-headers", exposeHeaders)]
        case .apiToken(let container):
            guard let token = QueryString.parse(head.query)["ckAPIToken"], let normalized = Origins.normalize(origin),
                  let grant = try? authenticator.apiGrant(token, container: container), grant.origins.contains(normalized) else {
                return [("vary", "Origin")]
            }
            return [("access-control-allow-origin", origin), ("vary", "Origin"), ("access-control-expose-headers", exposeHeaders)]
        }
    }

    /// The answer to a preflight (`OPTIONS` on a path with CORS), or nil for other requests.
    static func preflight(_ head: HTTPRequestHead, authenticator: Authenticator) -> HTTPResponse? {
        guard head.method == "OPTIONS", audience(head) != .none else { return nil }
        var headers = self.headers(for: head, authenticator: authenticator).filter { $0.0 != "access-control-expose-headers" }
        headers += [("access-control-allow-methods", allowMethods), ("access-control-allow-headers", allowHeaders),
                    ("access-control-max-age", String(maxAgeSeconds))]
        return HTTPResponse(status: 204, headers: headers, body: [])
    }
}
