import Foundation
public import TandemCore
public import TandemHTTP
public import TandemStore

/// Everything a route handler needs about one request.
public struct RequestContext: Sendable {
    public var request: HTTPRequest
    /// The request's `uuid`, echoed in error bodies and the log.
    public var uuid: String
    public var container: String = ""
    public var environment: Environment = .development
    public var database: DatabaseType = .private
    /// The authenticated user, when the route needs one.
    public var user: UserAccount?
    /// Signs the `downloadURL`s of asset fields in this request's answers (set by the router).
    var assetSigner: AssetURLSigner?
    /// Query parameters, percent-decoded.
    public var parameters: [String: String]
    /// The configured external base URL, if any (`--public-url`).
    var publicURL: String?
    /// The web auth token that replaces the presented one, sent back in
    /// `X-Apple-CloudKit-Web-Auth-Token` on this request's response, error or not (decisions A13).
    var rotatedWebAuthToken: String?

    init(request: HTTPRequest, publicURL: String? = nil) {
        self.request = request
        self.publicURL = publicURL
        uuid = UUID().uuidString.lowercased()
        parameters = QueryString.parse(request.head.query)
    }

    /// The caller's scope in the addressed database.
    public var scope: RequestScope {
        RequestScope(database: DatabaseScope(container: container, environment: environment, database: database,
                                             owner: user?.recordName ?? ""),
                     user: user?.recordName ?? "", deviceID: parameters["deviceID"] ?? "", baseURL: baseURL)
    }

    /// The body as a JSON object.
    /// - Throws: `BAD_REQUEST` for an empty body, malformed JSON (with line and column) or a
    ///   top-level value that is not an object.
    public func jsonBody() throws(CloudKitError) -> JSONObject {
        guard !request.body.isEmpty else { throw .badRequest("the request needs a JSON body") }
        let value: JSONValue
        do {
            value = try JSONParser.parse(request.body)
        } catch {
            throw .badRequest("malformed JSON at line \(error.line), column \(error.column): \(error.message)")
        }
        guard case .object(let object) = value else {
            throw .badRequest("the JSON body must be an object, found \(value.kindName)")
        }
        return object
    }

    /// The array under `key` in a JSON body, with at most `limit` items.
    /// - Throws: `BAD_REQUEST` when it is missing or not an array, `LIMIT_EXCEEDED` when too long.
    static func items(_ body: JSONObject, _ key: String, limit: Int, needed: String) throws(CloudKitError) -> [JSONValue] {
        guard case .array(let items)? = body[key] else { throw .badRequest(needed) }
        guard items.count <= limit else {
            throw CloudKitError(.limitExceeded, "at most \(limit) '\(key)' per request; got \(items.count)")
        }
        return items
    }

    /// The base URL clients reach this server at (asset and sign-in URLs): `--public-url` when
    /// configured; otherwise built from the Host header, which a client controls, so deployments
    /// behind a proxy should set `--public-url`.
    public var baseURL: String {
        publicURL ?? ("http://" + (request.head.headers["host"] ?? "127.0.0.1"))
    }
}

/// `a=b&c=d` parsing with percent-decoding (`+` stays `+`: CloudKit tokens contain it).
enum QueryString {
    static func parse(_ query: String) -> [String: String] {
        var result: [String: String] = [:]
        guard !query.isEmpty else { return result }
        for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            result[key] = value
        }
        return result
    }
}
