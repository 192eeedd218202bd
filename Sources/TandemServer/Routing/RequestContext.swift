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
        uuid = RequestID.make()
        parameters = QueryString.parse(request.head.query)
    }

    /// The caller's scope in the addressed database.
    public var scope: RequestScope {
        var scope = RequestScope(database: DatabaseScope(container: container, environment: environment, database: database,
                                                         owner: user?.recordName ?? ""),
                                 user: user?.recordName ?? "", deviceID: parameters["deviceID"] ?? "", baseURL: baseURL, mailBaseURL: mailLinkBaseURL)
        scope.avatarSigner = assetSigner
        return scope
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

    /// Refuses a JSON body holding a key outside `known` (decisions R42; the account's settings, A31).
    /// - Throws: `BAD_REQUEST` "unknown {noun} '{key}'; {listing}", naming the first such key.
    static func refuseUnknownKeys(_ body: JSONObject, known: Set<String>, noun: String, listing: String) throws(CloudKitError) {
        if let unknown = body.keys.first(where: { !known.contains($0) }) {
            throw .badRequest("unknown \(noun) '\(unknown)'; \(listing)")
        }
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

    /// The base URL for links emailed to a person (sign-up and password-reset links, which carry
    /// a secret, and share invitations; A45): `--public-url` when configured; otherwise the Host header only when it names
    /// this machine (`localhost`, `127.x.x.x`, `[::1]`, with any port); else nil, and no such
    /// email is sent. A forged Host would otherwise mail a person a link to another server that
    /// then receives the secret ("password reset poisoning"; decisions A38).
    public var mailLinkBaseURL: String? {
        if let publicURL { return publicURL }
        guard let host = request.head.headers["host"], Self.isLoopbackHost(host) else { return nil }
        return "http://" + host
    }

    /// Whether a Host header value (`name[:port]` or `[v6]:port`) names the loopback interface:
    /// `localhost` in any case, `127.x.x.x`, `[::1]`, each with an optional port of ASCII digits.
    /// Read as UTF-8 bytes (every request's scope asks; the Character-wise version cost 17,000
    /// instructions, decisions E17): a host with any other byte is not loopback.
    static func isLoopbackHost(_ host: String) -> Bool {
        // Over the string's own bytes, without a copy (the copies were 3,700 instructions of
        // every lookup's scope).
        var host = host
        return host.withUTF8 { isLoopbackHost(bytes: $0[...]) }
    }

    private static func isLoopbackHost(bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        func isPort(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Bool { !bytes.isEmpty && bytes.allSatisfy(isDigit) }
        var name = bytes
        if name.first == UInt8(ascii: "[") {
            guard let end = name.firstIndex(of: UInt8(ascii: "]")) else { return false }
            let rest = name[(end + 1)...]
            guard rest.isEmpty || (rest.first == UInt8(ascii: ":") && isPort(rest.dropFirst())) else { return false }
            return name[(name.startIndex + 1)..<end].elementsEqual("::1".utf8)
        }
        if let colon = name.firstIndex(of: UInt8(ascii: ":")) {
            guard isPort(name[(colon + 1)...]) else { return false }
            name = name[..<colon]
        }
        // ASCII letters to lower case; other bytes stay as they are (and match nothing below).
        let lower = { (byte: UInt8) in byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte }
        if name.count == 9 && zip(name, "localhost".utf8).allSatisfy({ lower($0) == $1 }) { return true }
        // Four dot-separated octets of 1–3 digits, each at most 255, the first 127.
        var octets = 0
        var start = name.startIndex
        var index = start
        while true {
            if index == name.endIndex || name[index] == UInt8(ascii: ".") {
                let octet = name[start..<index]
                guard !octet.isEmpty, octet.count <= 3, octet.allSatisfy(isDigit),
                      octet.reduce(0, { $0 * 10 + Int($1 - UInt8(ascii: "0")) }) <= 255,
                      octets > 0 || octet.elementsEqual("127".utf8) else { return false }
                octets += 1
                if index == name.endIndex { break }
                start = index + 1
            }
            index += 1
        }
        return octets == 4
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
