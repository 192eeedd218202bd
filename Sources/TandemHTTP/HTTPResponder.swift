/// The application side of the HTTP server: turns requests into responses.
///
/// The server calls `bodyLimit(for:)` and `errorResponse(status:reason:head:)` on its single
/// service thread, which owns every socket, so both must be cheap and must not block.
/// `respond(to:)` runs on a worker thread and may block.
///
/// ```swift
/// struct Echo: HTTPResponder {
///     func respond(to request: HTTPRequest) -> HTTPResponse {
///         HTTPResponse(status: 200, headers: [("content-type", "application/octet-stream")], body: request.body)
///     }
///     func bodyLimit(for head: HTTPRequestHead) -> Int { 1 << 20 }
///     func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
///         HTTPResponse(status: status, body: Array(reason.utf8))
///     }
/// }
/// ```
public protocol HTTPResponder: Sendable {
    /// Runs on a worker thread; may block (database work). Must not throw; renders its own errors.
    func respond(to request: HTTPRequest) -> HTTPResponse

    /// Called on the service thread when headers are complete, must not block: the largest
    /// body accepted for this request, in bytes. A larger `content-length` is answered with
    /// `errorResponse(status: 413, ...)` before any body is read.
    func bodyLimit(for head: HTTPRequestHead) -> Int

    /// Called on the service thread for failures the HTTP layer detects itself. Must be cheap
    /// and not block. The statuses used:
    /// - 400: malformed `content-length`, or `content-length` together with `transfer-encoding`;
    ///   input that is not an HTTP/1 request line (garbage, a TLS ClientHello, the HTTP/2
    ///   preface); a head not complete within `headTimeout` (e.g. a header line without a colon).
    /// - 405: a method lws parsed but the server does not serve, and `CONNECT` or `TRACE`.
    /// - 501: a well-formed request line with a method lws does not know (`PROPFIND`, ...).
    /// - 505: an HTTP version other than 1.0 and 1.1.
    /// - 411: `POST`/`PUT`/`PATCH` without `content-length` (unless its `HTTPBodyPolicy` says
    ///   `requiresLength: false`), and every chunked body: libwebsockets 4.1 does not de-chunk
    ///   request bodies and we parse no HTTP framing.
    /// - 408: the body did not arrive within its deadline (`HTTPServerConfiguration.bodyMinimumSeconds`,
    ///   `bodyMinimumRate`); the connection is closed.
    /// - 413: body over `bodyLimit(for:)`.
    /// - 429: the holder of the body (`HTTPAdmission.admitted`) already has its share of bodies
    ///   being received.
    /// - 501: a `transfer-encoding` other than `chunked`.
    /// - 503: the worker queue is full (`maxQueuedRequests`), or the server is shutting down.
    /// `head` is `nil` only when the request head itself could not be read.
    ///
    /// Some requests get no answer at all; the connection is closed instead: a pipelined
    /// request with a body that libwebsockets 4.1 cannot take from the bytes it read ahead
    /// (see `HTTPServer`), and a head lws' parser fails on (over `maxHeaderBytes`, more fields
    /// or query arguments than its table holds, `%00` in the path: lws closes from inside its
    /// parser with no callback first; see `ServiceLoop+ProtocolErrors`). For the others `head`
    /// is `nil` and the answer is written with `connection: close`. Known lws 4.1 parser limitation: an
    /// unknown header whose name is a strict prefix of one lws knows (`X-Auth:`, `Content:`,
    /// `Cache:`, `X-Forwarded:`) swallows the next header line, and as the last header leaves
    /// the request unfinished until the idle timeout; no lws option avoids it.
    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse

    /// Called on the service thread when headers are complete, must not block: how the body is
    /// received (limit, memory or file, admission first). The default takes
    /// `bodyLimit(for:)` into memory with no admission.
    func bodyPolicy(for head: HTTPRequestHead) -> HTTPBodyPolicy

    /// Runs on a worker thread, may block, for a request whose policy says `admitFirst`, before
    /// any of its body is accepted: `nil` lets the body be read, a response refuses it (401,
    /// 403, 404, ...) and is sent without reading the body, the connection then closed.
    /// The default admits everything.
    func admit(_ head: HTTPRequestHead) -> HTTPResponse?

    /// Runs on a worker thread, may block, instead of `admit(_:)` when implemented: the same
    /// decision, and when admitting, who the body is charged to (`HTTPAdmission.admitted`).
    /// The default asks `admit(_:)` and charges the body to the client's address.
    func admission(for head: HTTPRequestHead) -> HTTPAdmission

    /// Called on the service thread first, for a request whose policy says `admitFirst`; must
    /// not block: the admission when it can be decided from memory alone (a sender whose
    /// credentials were checked moments ago), which saves two thread hand-offs; `nil` asks a
    /// worker (`admission(for:)`). It may only admit what `admission(for:)` would admit.
    /// The default is `nil`.
    func quickAdmission(for head: HTTPRequestHead) -> HTTPAdmission?

    /// Called on the service thread when a request is handed to the workers, must not block:
    /// `true` for a request whose answer neither blocks nor waits for other requests (a read
    /// from the store), which then waits for a running worker rather than waking another
    /// beyond `HTTPServerConfiguration.runningWorkerLimit`. Writes that gather in a group
    /// commit want the opposite: every one waiting there at once. The default is `false`.
    func runsBriefly(_ head: HTTPRequestHead) -> Bool
}

/// An admission decision (`HTTPResponder.admission(for:)`).
public enum HTTPAdmission: Sendable {
    /// The body may be read. `holder` names who it is charged to (a user, the owner of an
    /// upload URL) for the per-holder shares (`HTTPServerConfiguration.maxSpooledBodiesPerHolder`,
    /// `maxBufferedBodyBytesPerHolder`); `nil` charges the client's address.
    case admitted(holder: String?)
    /// The answer, sent without reading the body; the connection is then closed.
    case refused(HTTPResponse)
}

extension HTTPResponder {
    public func bodyPolicy(for head: HTTPRequestHead) -> HTTPBodyPolicy {
        HTTPBodyPolicy(limit: bodyLimit(for: head))
    }

    public func admit(_ head: HTTPRequestHead) -> HTTPResponse? { nil }

    public func admission(for head: HTTPRequestHead) -> HTTPAdmission {
        admit(head).map { .refused($0) } ?? .admitted(holder: nil)
    }

    public func quickAdmission(for head: HTTPRequestHead) -> HTTPAdmission? { nil }

    public func runsBriefly(_ head: HTTPRequestHead) -> Bool { false }
}
