import Foundation
import FoundationNetworking
import TandemHTTP

/// Starts a server on a free loopback port for one test.
func startServer(responder: any HTTPResponder = TestResponder(),
                 webSocketResponder: (any WebSocketResponder)? = nil,
                 configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, workerCount: 8)
    configuration.shutdownGracePeriod = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, responder: responder, webSocketResponder: webSocketResponder)
    try server.start()
    return server
}

/// Polls `condition` every 10 ms for at most `seconds`.
func eventually(within seconds: Double = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}

func url(_ server: HTTPServer, _ pathAndQuery: String) -> URL {
    URL(string: "http://127.0.0.1:\(server.port)\(pathAndQuery)")!
}

/// One URLSession for all tests: ephemeral, many connections per host (so concurrency tests
/// are not throttled by the client), generous timeouts.
let testSession: URLSession = {
    let configuration = URLSessionConfiguration.ephemeral
    configuration.httpMaximumConnectionsPerHost = 256
    configuration.timeoutIntervalForRequest = 30
    return URLSession(configuration: configuration)
}()

func fetch(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
    let (data, response) = try await testSession.data(for: request)
    return (data, response as! HTTPURLResponse)
}

func fetch(_ url: URL) async throws -> (Data, HTTPURLResponse) {
    try await fetch(URLRequest(url: url))
}
