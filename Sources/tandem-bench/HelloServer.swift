import TandemHTTP

/// Ceiling (a): libwebsockets answering a fixed 11-byte JSON body, with no routing, JSON,
/// authentication or database. Run in the bench process on a free loopback port.
///
/// With `inlineResponder` the answer is made on the service thread itself, which is the
/// fastest this HTTP layer can go; without it every request takes the worker-pool round trip
/// that real endpoints take (shown as information, not as a ceiling).
final class HelloServer {
    static let body = Array(#"{"ok":true}"#.utf8)

    private let server: HTTPServer

    init(inline: Bool) {
        server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, inlineResponder: inline),
                            responder: HelloResponder())
    }

    /// Starts serving; returns the base URL.
    func start() throws -> String {
        try server.start()
        return "http://127.0.0.1:\(server.port)"
    }

    func stop() { server.shutdown() }
}

struct HelloResponder: HTTPResponder {
    func respond(to request: HTTPRequest) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("content-type", "application/json")], body: HelloServer.body)
    }

    func bodyLimit(for head: HTTPRequestHead) -> Int { 2 << 20 }

    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/plain")], body: Array(reason.utf8))
    }
}
