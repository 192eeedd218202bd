/// What arrived before the body: request line, headers and the peer's address.
///
/// `path` and `query` are delivered percent-encoded in a canonical form, because
/// libwebsockets 4.1 decodes and normalises the URI while parsing (see `HTTPServer` for the
/// exact rules). Percent-decoding `path`, or each name and value of `query`, gives the bytes
/// the client meant. `query` never contains `+`: a space is always `%20`.
public struct HTTPRequestHead: Sendable {
    /// Upper-case method: `GET`, `POST`, `PUT`, `DELETE`, `OPTIONS`, `PATCH` or `HEAD`.
    public var method: String
    /// The path, percent-encoded, always starting with `/`, without the query.
    public var path: String
    /// The query without the leading `?`, pairs joined with `&`, names and values
    /// percent-encoded; `""` if the URI had none.
    public var query: String
    /// The request headers (names lower-case).
    public var headers: HTTPHeaders
    /// The client's numeric IP address, e.g. `127.0.0.1` (IPv4-mapped IPv6 addresses are shown
    /// as IPv4): the TCP peer's, or, when the peer is one of
    /// `HTTPServerConfiguration.trustedProxies`, the one its `X-Forwarded-For` names
    /// (`TrustedProxies` gives the rule).
    public var remoteAddress: String

    public init(method: String, path: String, query: String = "", headers: HTTPHeaders = HTTPHeaders(),
                remoteAddress: String = "") {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.remoteAddress = remoteAddress
    }
}

/// A complete request: its head and its body, as handed to `HTTPResponder.respond(to:)`.
///
/// The body is at most `HTTPBodyPolicy.limit` bytes; chunked request bodies are not accepted
/// (411). A spooled body (`HTTPBodyPolicy.spooled`) is in `bodyFile`, and `body` is empty.
public struct HTTPRequest: Sendable {
    public var head: HTTPRequestHead
    /// The body bytes, exactly as sent (empty when the request had none, or was spooled).
    public var body: [UInt8]
    /// The body in a temporary file, when the responder asked for it to be spooled.
    public var bodyFile: HTTPBodyFile?

    public init(head: HTTPRequestHead, body: [UInt8] = [], bodyFile: HTTPBodyFile? = nil) {
        self.head = head
        self.body = body
        self.bodyFile = bodyFile
    }

    public var method: String { head.method }
    public var path: String { head.path }
    public var query: String { head.query }
    public var headers: HTTPHeaders { head.headers }
}
