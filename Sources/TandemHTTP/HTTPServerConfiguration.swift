/// How an `HTTPServer` listens, how many workers answer, and its limits.
///
/// ```swift
/// var configuration = HTTPServerConfiguration()
/// configuration.port = 0            // pick a free port; read it back from `HTTPServer.port`
/// configuration.workerCount = 16
/// ```
public struct HTTPServerConfiguration: Sendable {
    /// The address to listen on: an IPv4 or IPv6 literal, or `""` / `"0.0.0.0"` / `"*"` for
    /// every interface.
    public var host: String
    /// The TCP port; 0 asks the kernel for a free one.
    public var port: Int
    /// Worker threads running `HTTPResponder.respond(to:)`, created once at `start()`. At least 1.
    public var workerCount: Int
    /// Workers running requests at once before queued ones wait for one of them to finish
    /// (`WorkerPool`, decisions E28); a worker whose request has run `workerStallMicroseconds`
    /// counts as blocked and no longer as running. 0: no limit, every queued request wakes a
    /// worker. About the number of cores: more running threads than cores only take turns.
    public var runningWorkerLimit = 0
    /// Microseconds after which a request's worker counts as blocked rather than running (see
    /// `runningWorkerLimit`): how long queued requests wait at most for workers that block.
    public var workerStallMicroseconds = 1000
    /// Requests waiting for a worker beyond which new requests are answered 503 at once.
    public var maxQueuedRequests: Int
    /// Benchmarks only: call `respond(to:)` directly on the service thread, with no worker
    /// pool. Any blocking in the responder then stalls every connection.
    public var inlineResponder: Bool
    /// Header names libwebsockets does not know (it parses about 80 common ones, see
    /// `HTTPServer`) that should still be delivered in `HTTPRequestHead.headers`.
    /// libwebsockets 4.1 keeps unknown headers but offers no way to list them, so they can only
    /// be looked up by name. Case does not matter.
    public var customHeaderNames: [String]
    /// The most bytes of request line plus headers one request may use (libwebsockets'
    /// `max_http_header_data`), 1024...65535. Larger heads are refused by libwebsockets.
    public var maxHeaderBytes: Int
    /// Seconds an idle keep-alive connection is kept open between requests.
    public var keepAliveTimeout: Int
    /// Seconds a connection may stall while its body is read or its response is written
    /// before it is closed.
    public var idleTimeout: Int
    /// Seconds `shutdown()` waits for in-flight requests before closing what is left.
    public var shutdownGracePeriod: Double
    /// Limits and keep-alive of WebSocket connections (used when the server has a
    /// `WebSocketResponder`).
    public var webSocket: WebSocketConfiguration
    /// Seconds a request head may take to arrive in full, counted from when the server starts
    /// waiting for it (the connection opened, or the previous response was written). A head
    /// begun and still incomplete then (a client that stalls, or a header line lws cannot
    /// end, such as one without a colon) is answered 400 and the connection closed.
    public var headTimeout = 5
    /// Proxies (load balancers) whose `X-Forwarded-For` header names the client in
    /// `HTTPRequestHead.remoteAddress`, and so in every per-address limit. Empty (the default):
    /// the header is never believed, the TCP peer is the client.
    public var trustedProxies = TrustedProxies()
    /// Where spooled bodies (`HTTPBodyPolicy.spooled`) are written; `nil`: `$TMPDIR` or `/tmp`.
    /// Put it on the file system the responder moves them to, so a rename suffices.
    public var spoolDirectory: String?
    /// Spooled bodies admitted or being received at once; one more is answered 503.
    public var maxSpooledBodies = 32
    /// Bytes of one spooled body allowed in memory on their way to disk before the connection
    /// stops being read until half of them are written.
    public var spoolWindow = 1 << 20
    /// Bytes of in-memory bodies (reserved by `content-length`) the server holds at once; a
    /// request that would pass it is answered 503 before its body is read. With the spool
    /// settings this bounds what request bodies can make the server hold:
    /// `maxBufferedBodyBytes + maxSpooledBodies × (spoolWindow + 64 KiB)`
    /// (128 MiB + 32 × 1.0625 MiB = 162 MiB by default).
    public var maxBufferedBodyBytes = 128 << 20
    /// Spooled bodies one holder (`HTTPAdmission.admitted(holder:)`: a user, the owner of an
    /// upload URL; else the client's address) may have admitted or being received at once;
    /// one more is answered 429. So one user cannot take every spool slot.
    public var maxSpooledBodiesPerHolder = 4
    /// Bytes of in-memory bodies one holder (as above) may hold at once; a request that would
    /// pass it is answered 429 before its body is read.
    public var maxBufferedBodyBytesPerHolder = 16 << 20
    /// A body must arrive whole within `max(bodyMinimumSeconds, content-length / bodyMinimumRate)`
    /// seconds of being admitted, however steadily it trickles (lws' own timeout restarts at
    /// every byte); past that it is answered 408 and the connection closed, releasing what it
    /// held. 10 s and 64 KiB/s by default: a 2 MiB JSON body gets 32 s, a 50 MiB upload 800 s.
    public var bodyMinimumSeconds = 10
    /// Bytes per second; see `bodyMinimumSeconds`.
    public var bodyMinimumRate = 64 << 10
    /// Seconds between the listener watchdog's checks that the listening socket is still the
    /// one bound at `start()` and still listening (three system calls each); 0 turns it off.
    /// A lost listener stops the server with `HTTPServer.failure` set (see `HTTPServer`), so
    /// the longest a server can sit deaf (and, inside lws, busy) is about this long.
    public var listenerCheckInterval = 1.0

    /// Seconds the whole body of `length` bytes may take to arrive.
    public func bodyDeadline(length: Int) -> Int {
        max(bodyMinimumSeconds, (length + max(1, bodyMinimumRate) - 1) / max(1, bodyMinimumRate))
    }

    /// The CloudKit Web Services request headers (server-to-server key authentication) plus a
    /// few proxy, CORS and Fetch Metadata (`Sec-Fetch-Site`, the pages' CSRF check) headers that
    /// libwebsockets does not parse itself.
    public static let defaultCustomHeaderNames = [
        "X-Apple-CloudKit-Request-KeyID",
        "X-Apple-CloudKit-Request-ISO8601Date",
        "X-Apple-CloudKit-Request-SignatureV1",
        "X-Request-ID",
        "X-Forwarded-Proto",
        "X-Forwarded-Host",
        "Access-Control-Request-Method",
        "Sec-Fetch-Site",
    ]

    public init(host: String = "127.0.0.1",
                port: Int = 8080,
                workerCount: Int = 64,
                maxQueuedRequests: Int = 4096,
                inlineResponder: Bool = false,
                customHeaderNames: [String] = HTTPServerConfiguration.defaultCustomHeaderNames,
                maxHeaderBytes: Int = 16 * 1024,
                keepAliveTimeout: Int = 5,
                idleTimeout: Int = 30,
                shutdownGracePeriod: Double = 10,
                webSocket: WebSocketConfiguration = WebSocketConfiguration()) {
        self.host = host
        self.port = port
        self.workerCount = workerCount
        self.maxQueuedRequests = maxQueuedRequests
        self.inlineResponder = inlineResponder
        self.customHeaderNames = customHeaderNames
        self.maxHeaderBytes = maxHeaderBytes
        self.keepAliveTimeout = keepAliveTimeout
        self.idleTimeout = idleTimeout
        self.shutdownGracePeriod = shutdownGracePeriod
        self.webSocket = webSocket
    }
}
