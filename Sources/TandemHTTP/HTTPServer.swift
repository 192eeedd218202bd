import CWebSockets
import Foundation
import TandemCore

/// An HTTP/1.1 server: libwebsockets on one service thread, responders on a worker pool.
///
/// ```swift
/// let server = HTTPServer(configuration: HTTPServerConfiguration(port: 8080), responder: MyResponder())
/// try server.start()
/// server.waitUntilStopped()   // until some other thread calls server.shutdown()
/// ```
///
/// libwebsockets owns every socket on a single service thread. It parses the head, the
/// server collects the body (bounded by `HTTPResponder.bodyLimit(for:)`) and queues the
/// request for one of `workerCount` worker threads, which run `HTTPResponder.respond(to:)`.
/// The finished response is handed back to the service thread, which writes it in chunks.
/// Keep-alive works, and pipelining within what libwebsockets 4.1 allows (below); TLS,
/// HTTP/2 is not offered (an `h2c` upgrade, or `CONNECT`, is answered by closing the
/// connection). WebSocket upgrades are served on the same port and service thread when a
/// `WebSocketResponder` is given (see there); without one they are closed too.
///
/// What the server delivers, given libwebsockets 4.1.6's parser:
/// - Methods: `GET POST PUT DELETE OPTIONS PATCH HEAD`. Others are refused by lws itself.
/// - `path` and `query` are percent-encoded again after lws decoded them (see
///   `HTTPRequestHead`). Lossy corners inherited from lws: a literal `+` anywhere in the URI
///   becomes a space (`%2B` stays `+`); `/./`, `//` and `/../` in the path are resolved, and a
///   decoded `%2F` cannot be told from `/`; the query is split at both `&` and `;` (rejoined
///   with `&`); an encoded `=` inside a query *name* arrives as `_`; empty arguments are dropped;
///   `%00` or a malformed escape makes lws refuse the request; a query ending in `?` or `&` would
///   come with a stray final `/` argument from lws, which is removed.
/// - Headers: every header lws knows by name (about 80: `host`, `content-type`,
///   `content-length`, `authorization`, `accept`, `user-agent`, `x-forwarded-for`, `origin`,
///   `if-none-match`, ...), with lower-case names, plus the names in
///   `HTTPServerConfiguration.customHeaderNames` (only the first occurrence of those).
///   Other unknown headers are not visible. Values are UTF-8 (invalid bytes replaced), with
///   surrounding blanks removed.
/// - Known limitation (lws 4.1's header parser, no option avoids it): an unknown header whose
///   name is a strict prefix of a header lws knows (`X-Auth:` of `x-auth-token:`, `Content:`,
///   `Cache:`, `X-Forwarded:`, `Accept-Char:` ...) swallows the following header line; if it is
///   the last header the head never ends and the client waits until `idleTimeout` closes the
///   connection. lws matches the name against its table of known names and, when the `:`
///   comes where the table expects more letters, keeps reading the rest of the line and the
///   next one as the name. Clients must not send such headers; listing the name in
///   `customHeaderNames` does not help.
///
/// Bodies and connections:
/// - A body is collected whole before `respond(to:)` runs, up to `bodyLimit(for:)` bytes.
///   `expect: 100-continue` is answered with `100 Continue` once the length is accepted.
/// - `transfer-encoding: chunked` request bodies are refused with 411 (lws 4.1 does not
///   de-chunk them and the server parses no HTTP framing itself): send a `content-length`.
/// - Pipelining: requests sent before the previous response arrived are answered in order
///   while libwebsockets can take them from the bytes it has read ahead. It cannot when such a
///   request has a body (lws 4.1 would hand the request its own head as body and then loop
///   forever): then the connection is closed before that request, without answering it or
///   anything behind it, and the client retries them on a new connection as RFC 9112 asks of
///   pipelining clients. A request sent after the previous response arrived is never affected.
///   While lws holds pipelined bytes it cannot use yet, the service thread polls without
///   sleeping until the response in progress is written (briefly, unless the client is slow
///   to read a large response).
/// - Errors the layer detects itself are rendered by
///   `HTTPResponder.errorResponse(status:reason:head:)` and close the connection, except the
///   503 for a full queue. Before closing, up to 4 MiB of a refused body that the client sends
///   anyway is read and dropped (waiting at most 2 s for it to start), so the client can read
///   the answer instead of a connection reset.
/// - Responses always carry `content-length`; keep-alive follows HTTP/1.1 rules and lws'
///   idle timeout (`keepAliveTimeout`).
///
/// A listener watchdog checks every `listenerCheckInterval` seconds that the listening
/// descriptor still names the socket bound at `start()` and that it still listens. If not
/// (closed or replaced behind lws' back, which would leave lws polling a stale descriptor at
/// 100% CPU and accepting nothing), it writes one line to standard error, records `failure`
/// and stops the server.
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    private let responder: any HTTPResponder
    private let webSocketResponder: (any WebSocketResponder)?
    private let counters = ServerCounters()
    private let stopSignal = StopSignal()
    private let stopFailure = ServerFailure()
    private let lifecycle = Locked(Lifecycle.idle)

    private enum Lifecycle {
        case idle
        case running(ServiceLoop)
        case stopping(ServiceLoop)
        case stopped
    }

    /// A server answering HTTP requests with `responder` and, when `webSocketResponder` is
    /// given, WebSocket upgrades with it.
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder,
                webSocketResponder: (any WebSocketResponder)? = nil) {
        self.configuration = configuration
        self.responder = responder
        self.webSocketResponder = webSocketResponder
    }

    /// Binds and listens, then starts the service thread and the workers.
    ///
    /// - Throws: `HTTPServerError` with `.bindFailed` if the address cannot be bound,
    ///   `.invalidConfiguration` for out-of-range settings, `.invalidState` if already started
    ///   or shut down.
    public func start() throws(HTTPServerError) {
        try validate(configuration)
        try lifecycle.withLock { (state) throws(HTTPServerError) in
            guard case .idle = state else {
                throw HTTPServerError(code: .invalidState, reason: "start() called twice or after shutdown()")
            }
            let loop = ServiceLoop(configuration: configuration, responder: responder,
                                   webSocketResponder: webSocketResponder, counters: counters, stopSignal: stopSignal,
                                   failure: stopFailure)
            try loop.open()
            loop.startThreads()
            state = .running(loop)
        }
    }

    /// The listening port after `start()` (the kernel's choice when configured as 0), else 0.
    public var port: Int { counters.port }

    /// Connections currently open.
    public var openConnections: Int { counters.openConnections }

    /// Requests whose head has arrived and whose response is not completely written yet
    /// (reading their body, queued, in a responder, or being written).
    public var inFlightRequests: Int { counters.inFlightRequests }

    /// WebSocket connections currently open (handshake done, not yet closed).
    public var openWebSockets: Int { counters.openWebSockets }

    /// Droppable WebSocket messages dropped because a send queue was full, since `start()`.
    public var droppedWebSocketMessages: Int { counters.droppedMessages }

    /// WebSocket connections closed with `WebSocketClose.slowConsumer`, since `start()`.
    public var slowConsumerCloses: Int { counters.slowConsumerCloses }

    /// Request bodies the server holds now, and the most it has held in memory.
    public var bodies: HTTPBodyFigures { counters.bodies }

    /// Why the server stopped on its own, or nil: `.listenerLost` when the listener watchdog
    /// (`HTTPServerConfiguration.listenerCheckInterval`) found the listening socket closed,
    /// replaced or no longer listening. The server has then stopped (in-flight requests were
    /// given the grace period) and `waitUntilStopped()` returns. A process that serves should then exit with a
    /// non-zero status so that its supervisor restarts it (`tandem serve` does). Nil after an
    /// ordinary `shutdown()`.
    public var failure: HTTPServerError? { stopFailure.error }

    /// Stops the server gracefully and waits until it has stopped.
    ///
    /// WebSockets are closed at once with 1001 (`WebSocketClose.goingAway`), dropping their
    /// queued messages; the grace period also waits for their close handshakes.
    ///
    /// New requests are answered `errorResponse(status: 503, ...)` with the connection closed,
    /// and idle keep-alive connections are closed. Requests already in flight finish and their
    /// responses are written, for at most `shutdownGracePeriod` seconds; then the lws context
    /// is destroyed (closing what is left and the listening socket) and the threads end.
    /// Idempotent and callable from any thread; when called from one of the server's own
    /// threads (inside a responder) it only initiates the shutdown, without waiting.
    ///
    /// Bounded: should the service thread not have stopped `shutdownGracePeriod` + 5 seconds
    /// after the call (it would be stuck, a bug), `shutdown()` reports that on standard error
    /// and returns anyway, as does `waitUntilStopped()`; the stuck thread, the workers and the
    /// listening socket then stay until the process exits.
    public func shutdown() {
        let loop: ServiceLoop? = lifecycle.withLock { state in
            switch state {
            case .idle:
                state = .stopped
                stopSignal.set()
                return nil
            case .running(let loop):
                state = .stopping(loop)
                loop.requestShutdown()
                return loop
            case .stopping(let loop):
                return loop
            case .stopped:
                return nil
            }
        }
        guard let loop, !loop.isServerThread else { return }
        // The service thread checks its grace deadline whenever it wakes; keep it waking. It
        // stops within the grace period plus a moment; if it does not, it is stuck (a bug, in
        // a callback or inside libwebsockets) and nothing can stop it from here: stop waiting.
        let deadline = Date(timeIntervalSinceNow: configuration.shutdownGracePeriod + Self.shutdownStallAllowance)
        while !stopSignal.wait(seconds: 0.1) {
            if Date() >= deadline {
                abandon()
                return
            }
            loop.completions.wake()
        }
    }

    /// Seconds beyond `shutdownGracePeriod` that `shutdown()` waits for the service thread.
    public static let shutdownStallAllowance = 5.0

    /// Gives up on a service thread that does not stop: reports it and lets `shutdown()` and
    /// `waitUntilStopped()` return. The thread, the workers, the context and the listening
    /// socket are left as they are (touching them from here would race with the thread) and
    /// go when the process exits.
    private func abandon() {
        let shouldReport = lifecycle.withLock { state in
            guard case .stopping = state else { return false }
            state = .stopped
            return true
        }
        if shouldReport {
            ErrorReport.line("the service thread did not stop within \(configuration.shutdownGracePeriod + Self.shutdownStallAllowance) s of shutdown(); abandoning it")
        }
        stopSignal.set()
    }

    /// Blocks until `shutdown()` has completed (returns at once if it already has).
    public func waitUntilStopped() {
        stopSignal.wait()
    }

    /// The libwebsockets version linked in, e.g. `"4.1.6-"`.
    public static var libwebsocketsVersion: String {
        String(cString: lws_get_library_version())
    }

    private func validate(_ configuration: HTTPServerConfiguration) throws(HTTPServerError) {
        func invalid(_ reason: String) -> HTTPServerError {
            HTTPServerError(code: .invalidConfiguration, reason: reason)
        }
        guard (0...65535).contains(configuration.port) else { throw invalid("port must be 0...65535") }
        guard configuration.workerCount >= 1 else { throw invalid("workerCount must be at least 1") }
        guard configuration.maxQueuedRequests >= 1 else { throw invalid("maxQueuedRequests must be at least 1") }
        guard (1024...65535).contains(configuration.maxHeaderBytes) else {
            throw invalid("maxHeaderBytes must be 1024...65535")
        }
        guard configuration.keepAliveTimeout >= 1, configuration.idleTimeout >= 1 else {
            throw invalid("timeouts must be at least 1 second")
        }
        guard configuration.shutdownGracePeriod >= 0 else { throw invalid("shutdownGracePeriod must not be negative") }
        guard configuration.listenerCheckInterval >= 0 else { throw invalid("listenerCheckInterval must not be negative") }
        if let problem = configuration.webSocket.problem { throw invalid(problem) }
    }
}
