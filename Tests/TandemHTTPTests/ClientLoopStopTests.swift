import Foundation
import FoundationNetworking
import Testing
@testable import TandemHTTP
import TandemTestSupport

/// When the process's WebSocket client loop stops (libwebsockets failing), nothing waits for
/// it: connections end, a connect in progress and every later one throw `.clientStopped`.
@Suite struct ClientLoopStopTests {
    /// Runs in a child process (an exit test): stopping the shared client loop here would end
    /// every WebSocket client of the test process.
    @Test func aStoppedClientLoopEndsEveryConnectionAndFailsEveryConnect() async {
        await #expect(processExitsWith: .success) {
            let server = try startServer(webSocketResponder: TestWebSocketResponder())
            defer { server.shutdown() }
            let open = try await WebSocketClient.connect(to: wsURL(server))
            let reader = Task { () -> [WebSocketClient.Event] in
                var seen: [WebSocketClient.Event] = []
                for await event in open.events { seen.append(event) }
                return seen
            }

            // A connect that waits for a handshake answer that never comes.
            let silent = try SilentPeer()
            let silentURL = URL(string: "ws://127.0.0.1:\(silent.port)/ws")!
            let pending = Task { () -> WebSocketError? in
                do {
                    _ = try await WebSocketClient.connect(to: silentURL)
                    return nil
                } catch {
                    return error as? WebSocketError
                }
            }
            #expect(silent.acceptOne(within: 10), "the connect never reached the peer")

            try ClientLoop.shared().halt("stopped by the test")

            let seen = try await withTimeout(10) { await reader.value }
            guard case .closed(let reason)? = seen.last else {
                Issue.record("expected a close, got \(seen)")
                return
            }
            #expect(reason.code == WebSocketClose.abnormal)
            #expect(reason.reason.contains("client loop of this process has stopped (stopped by the test)"))
            #expect(await open.send(text: "after") == .closed)

            let failure = try await withTimeout(10) { await pending.value }
            #expect(failure?.code == .clientStopped)

            let later = try await withTimeout(10) { () -> WebSocketError? in
                do {
                    _ = try await WebSocketClient.connect(to: wsURL(server))
                    return nil
                } catch {
                    return error as? WebSocketError
                }
            }
            #expect(later?.code == .clientStopped)
            // The HTTP server (its own lws context and thread) is unaffected.
            #expect(try await fetch(url(server, "/still")).1.statusCode == 200)
        }
    }
}
