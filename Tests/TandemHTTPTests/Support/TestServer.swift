import Foundation
import TandemHTTP

/// Starts a server on a free loopback port for one test.
func startServer(responder: TestResponder = TestResponder(),
                 configure: (inout HTTPServerConfiguration) -> Void = { _ in }) throws -> HTTPServer {
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0, workerCount: 8)
    configuration.shutdownGracePeriod = 5
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, responder: responder)
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
