import Foundation
import Testing
import Tandem
@testable import TandemHTTP
import TandemTestSupport

/// The SDK's side of a stopped WebSocket client loop (libwebsockets failing in this process):
/// streams waiting on it, and every later one, end with a clear `TandemError` instead of hanging
/// or retrying for ever.
@Suite struct StreamClientLoopStopTests {
    /// Runs in a child process (an exit test): stopping the shared client loop here would end
    /// the streams of every other test in the process.
    @Test func notificationsEndWithInternalErrorWhenTheClientLoopStops() async {
        await #expect(processExitsWith: .success) {
            // The stream connects, then waits for a handshake answer that never comes.
            let silent = try SilentPeer()
            let container = Container(identifier: "iCloud.com.example.sdk", serverURL: URL(string: "http://127.0.0.1:\(silent.port)")!,
                                      credentials: .userToken("unused"))
            let waiting = Task { () -> (any Error)? in
                do {
                    for try await _ in container.notifications {}
                    return nil
                } catch {
                    return error
                }
            }
            #expect(silent.acceptOne(within: 10), "the stream never connected")

            try ClientLoop.shared().halt("stopped by the test")

            let first = try await withTimeout(10) { await waiting.value }
            let error = try #require(first as? TandemError)
            #expect(error.code == .internalError)
            #expect(error.description.contains("client loop of this process has stopped"))

            // A later stream fails at once too, rather than retrying a loop that is gone.
            let later = try await withTimeout(10) { () -> (any Error)? in
                do {
                    for try await _ in container.notifications {}
                    return nil
                } catch {
                    return error
                }
            }
            #expect((later as? TandemError)?.code == .internalError)
        }
    }
}
