import Foundation
import Testing
import TandemTestSupport

/// `tandem serve` whose listening socket is lost says so and exits non-zero, so that its
/// supervisor restarts it, instead of sitting deaf at 100% CPU (decision E5).
@Suite struct ListenerWatchdogTests {
    @Test func aServerWhoseListeningSocketStopsListeningExitsNonZeroSayingWhy() throws {
        let server = try TestServer()
        let process = try #require(server.process)
        // The same socket as the server's (pidfd_getfd): shutting it down here stops it there.
        let socket = try ListeningSockets.duplicate(from: process.processIdentifier, port: server.port)
        #expect(shutdown(socket, Int32(SHUT_RDWR)) == 0)
        close(socket)

        #expect(eventually(seconds: 30) { !process.isRunning }, "the server kept running")
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 1)
        let log = { server.standardError?.value ?? "" }
        #expect(eventually(seconds: 5) { log().contains("error: HTTPServerError.listenerLost") }, "\(log().suffix(2000))")
        #expect(log().contains("TandemHTTP: port \(server.port): the listening socket is lost"))
    }
}
