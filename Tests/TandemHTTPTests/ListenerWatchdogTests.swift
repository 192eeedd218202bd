import Foundation
import Testing
import TandemHTTP
import TandemTestSupport

/// The listener watchdog (decision E5): a server whose listening socket is gone says so and
/// stops, instead of sitting deaf (or spinning inside libwebsockets) for ever.
@Suite struct ListenerWatchdogTests {
    /// What a stray `close` elsewhere in the process followed by a reused number does: the
    /// descriptor lws polls now names some other socket. Here a UDP socket, which `poll` never
    /// reports readable: the server would accept nothing, silently, for ever.
    @Test func aListeningDescriptorThatNowNamesAnotherSocketStopsTheServer() throws {
        let server = try startServer { $0.listenerCheckInterval = 0.2 }
        defer { server.shutdown() }
        let descriptor = try #require(ListeningSockets.descriptor(port: server.port))
        let other = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        try #require(other >= 0)
        #expect(dup2(other, descriptor) == descriptor)
        close(other)
        try expectStoppedOnItsOwn(server)
        #expect(server.failure?.reason.contains("descriptor \(descriptor) now refers to another file") == true)
    }

    /// A listening socket shut down behind lws' back (here by the test; `shutdown(2)` acts on
    /// the socket, whoever holds it): lws drops the descriptor, and nothing listens any more.
    @Test func aListeningSocketThatStopsListeningStopsTheServer() throws {
        let server = try startServer { $0.listenerCheckInterval = 0.2 }
        defer { server.shutdown() }
        let descriptor = try #require(ListeningSockets.descriptor(port: server.port))
        #expect(shutdown(descriptor, Int32(SHUT_RDWR)) == 0)
        try expectStoppedOnItsOwn(server)
    }

    @Test func anOrdinaryShutdownIsNoFailureAndTheIntervalIsValidated() throws {
        let server = try startServer { $0.listenerCheckInterval = 0.05 }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /alive HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try client.readResponse().status == 200)
        usleep(300_000)  // several checks of a healthy listener
        server.shutdown()
        #expect(server.failure == nil)

        var configuration = HTTPServerConfiguration(port: 0)
        configuration.listenerCheckInterval = -1
        #expect(throws: HTTPServerError.self) { try HTTPServer(configuration: configuration, responder: TestResponder()).start() }
    }

    /// The server stops without `shutdown()`, reporting `.listenerLost`.
    private func expectStoppedOnItsOwn(_ server: HTTPServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            server.waitUntilStopped()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: .now() + 30) == .success, "the server did not stop on its own", sourceLocation: sourceLocation)
        #expect(server.failure?.code == .listenerLost, sourceLocation: sourceLocation)
        #expect(server.failure?.reason.contains("the listening socket is lost") == true, sourceLocation: sourceLocation)
    }
}
