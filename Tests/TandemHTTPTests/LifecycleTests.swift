import Foundation
import FoundationNetworking
import Testing
import Synchronization
import TandemHTTP

extension EndToEndTests {
    /// Concurrency, disconnects, shutdown and the listening port.
    @Suite struct Lifecycle {
        @Test func concurrentSlowRequestsRunInParallelOnTheWorkerPool() async throws {
            let responder = TestResponder()
            let server = try startServer(responder: responder) { $0.workerCount = 64 }
            defer { server.shutdown() }
            let started = Date()
            let bodies = try await withThrowingTaskGroup(of: (Int, Int, String).self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let (data, response) = try await fetch(url(server, "/sleep?ms=50&id=\(index)"))
                        return (index, response.statusCode, String(decoding: data, as: UTF8.self))
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = Date().timeIntervalSince(started)
            #expect(bodies.count == 200)
            for (index, status, body) in bodies {
                #expect(status == 200)
                #expect(body == "slept \(index)")
            }
            // One at a time would take 10 s; 64 workers need about 4 rounds of 50 ms.
            #expect(elapsed < 3)
            #expect(responder.peakConcurrency >= 32)
        }

        @Test func clientsVanishingBeforeTheirSlowResponseDoNotHurt() throws {
            let responder = TestResponder()
            let server = try startServer(responder: responder)
            defer { server.shutdown() }
            let resetter = try RawHTTPClient(port: server.port)
            try resetter.send("GET /sleep?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n")
            let closer = try RawHTTPClient(port: server.port)
            try closer.send("POST /sleep?ms=300 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhi")
            let bigReader = try RawHTTPClient(port: server.port)
            try bigReader.send("GET /big?bytes=\(16 << 20) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { server.inFlightRequests == 3 })
            resetter.abort()
            closer.close()
            usleep(100_000)
            bigReader.abort()

            #expect(eventually { server.inFlightRequests == 0 && server.openConnections == 0 })
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            #expect(responder.requestsServed == 4)
        }

        @Test func countersFollowConnectionsAndRequests() throws {
            let server = try startServer()
            defer { server.shutdown() }
            let clients = try (0..<3).map { _ in try RawHTTPClient(port: server.port) }
            #expect(eventually { server.openConnections == 3 })
            try clients[0].send("GET /sleep?ms=300 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { server.inFlightRequests == 1 })
            #expect(try clients[0].readResponse().status == 200)
            #expect(eventually { server.inFlightRequests == 0 })
            clients.forEach { $0.close() }
            #expect(eventually { server.openConnections == 0 })
        }

        @Test func shutdownLetsAnInFlightRequestFinishThenFreesThePort() async throws {
            let responder = TestResponder()
            let server = try startServer(responder: responder)
            let port = server.port
            let idle = try RawHTTPClient(port: port)
            try idle.send("GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try idle.readResponse().status == 200)
            // 2 s: long enough to still be in flight when `late` connects on a loaded machine.
            let slow = Task { try await fetch(url(server, "/sleep?ms=2000&id=last")) }
            // Wait for the slow request inside the responder, not for `inFlightRequests == 1`:
            // "/first" counts until the service thread has finished writing it, which can be
            // after its client read the answer. Under load the test then shut down a server
            // with nothing in flight, which closed its listening socket at once (the "lost
            // listening socket" of issue 21; decision E4).
            #expect(eventually(within: 30) { responder.activeCount == 1 })

            let started = Date()
            let stopped = Task.detached { server.shutdown() }
            // An idle keep-alive connection is closed at once, not after the grace period (5 s).
            #expect(idle.waitForClose())
            #expect(Date().timeIntervalSince(started) < 2.5)
            usleep(100_000)
            // While draining, a new request is turned away.
            let late = try RawHTTPClient(port: port)
            try late.send("GET /late HTTP/1.1\r\nHost: x\r\n\r\n")
            let refused = try late.readResponse()
            #expect(refused.status == 503)
            #expect(refused.text == "error 503: The server is shutting down.")
            let (data, response) = try await slow.value
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "slept last")
            await stopped.value
            #expect(Date().timeIntervalSince(started) > 0.4)
            server.waitUntilStopped()

            #expect(throws: RawHTTPClient.Failure.self) { try RawHTTPClient(port: port) }
            let again = HTTPServer(configuration: HTTPServerConfiguration(port: port, workerCount: 1),
                                   responder: TestResponder())
            try again.start()
            #expect(again.port == port)
            again.shutdown()
        }

        @Test func shutdownGivesUpOnResponsesAfterTheGracePeriod() throws {
            let server = try startServer { $0.shutdownGracePeriod = 0.3 }
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /sleep?ms=3000 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { server.inFlightRequests == 1 })
            let started = Date()
            server.shutdown()
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed < 2)
            #expect(client.waitForClose())
        }

        @Test func shutdownIsIdempotentAndLifecycleMisuseThrows() throws {
            let never = HTTPServer(configuration: HTTPServerConfiguration(port: 0), responder: TestResponder())
            never.shutdown()
            never.waitUntilStopped()
            #expect(throws: HTTPServerError.self) { try never.start() }

            let server = try startServer()
            #expect(server.port > 0)
            #expect(throws: HTTPServerError.self) { try server.start() }
            server.shutdown()
            server.shutdown()
            server.waitUntilStopped()
            #expect(server.openConnections == 0)
        }

        @Test func aPortInUseFailsToStart() throws {
            let first = try startServer()
            defer { first.shutdown() }
            let second = HTTPServer(configuration: HTTPServerConfiguration(port: first.port), responder: TestResponder())
            do {
                try second.start()
                Issue.record("second server bound port \(first.port)")
                second.shutdown()
            } catch {
                #expect(error.code == .bindFailed)
            }
            var bad = HTTPServerConfiguration(port: 70000)
            bad.workerCount = 0
            #expect(throws: HTTPServerError.self) { try HTTPServer(configuration: bad, responder: TestResponder()).start() }
        }

        @Test func shutdownFromInsideAResponderDoesNotDeadlock() throws {
            final class Stopper: HTTPResponder {
                let server = Mutex<HTTPServer?>(nil)
                func respond(to request: HTTPRequest) -> HTTPResponse {
                    server.withLock { $0 }?.shutdown()
                    return HTTPResponse(status: 200, body: Array("bye".utf8))
                }
                func bodyLimit(for head: HTTPRequestHead) -> Int { 0 }
                func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
                    HTTPResponse(status: status)
                }
            }
            let stopper = Stopper()
            let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, workerCount: 2), responder: stopper)
            stopper.server.withLock { $0 = server }
            try server.start()
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.text == "bye")
            #expect(response.headers["connection"] == "close")
            server.waitUntilStopped()
        }

        @Test func inlineResponderServesOnTheServiceThread() async throws {
            let server = try startServer { $0.inlineResponder = true }
            defer { server.shutdown() }
            var request = URLRequest(url: url(server, "/echo?inline=1"))
            request.httpMethod = "POST"
            request.httpBody = Data("abc\u{0}def".utf8)
            let (data, response) = try await fetch(request)
            #expect(response.statusCode == 200)
            #expect(Array(data) == Array("abc\u{0}def".utf8))
            #expect(response.value(forHTTPHeaderField: "x-query") == "inline=1")
            let (big, _) = try await fetch(url(server, "/big?bytes=3000000"))
            #expect(big.count == 3_000_000)
        }

        @Test(arguments: [("0.0.0.0", "127.0.0.1"), ("", "127.0.0.1"), ("::1", "::1")])
        func listensOnTheConfiguredAddress(host: String, clientHost: String) throws {
            let server = try startServer { $0.host = host }
            defer { server.shutdown() }
            let client = try RawHTTPClient(host: clientHost, port: server.port)
            try client.send("GET /where HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.headers["x-remote"] == clientHost)
        }

        /// A service thread that never comes back (here an inline responder that blocks, as a
        /// libwebsockets bug could) must not make `shutdown()` wait forever.
        @Test func shutdownIsBoundedWhenTheServiceThreadIsStuck() throws {
            final class Blocker: HTTPResponder {
                let entered = DispatchSemaphore(value: 0)
                let release = DispatchSemaphore(value: 0)
                func respond(to request: HTTPRequest) -> HTTPResponse {
                    entered.signal()
                    release.wait()
                    return HTTPResponse(status: 200)
                }
                func bodyLimit(for head: HTTPRequestHead) -> Int { 0 }
                func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
                    HTTPResponse(status: status)
                }
            }
            let blocker = Blocker()
            var configuration = HTTPServerConfiguration(port: 0, workerCount: 1, inlineResponder: true)
            configuration.shutdownGracePeriod = 0.2
            let server = HTTPServer(configuration: configuration, responder: blocker)
            try server.start()
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(blocker.entered.wait(timeout: .now() + 5) == .success)

            // On a thread of its own, so that an unbounded shutdown() fails the test instead
            // of hanging it.
            let limit = configuration.shutdownGracePeriod + HTTPServer.shutdownStallAllowance
            let returned = DispatchSemaphore(value: 0)
            let started = Date()
            Thread.detachNewThread {
                server.shutdown()
                returned.signal()
            }
            #expect(returned.wait(timeout: .now() + limit + 3) == .success, "shutdown() did not return")
            let elapsed = Date().timeIntervalSince(started)
            #expect(elapsed >= HTTPServer.shutdownStallAllowance)
            blocker.release.signal()
            server.waitUntilStopped()
            server.shutdown()
        }

        @Test func reportsTheLinkedLibwebsocketsVersion() {
            #expect(HTTPServer.libwebsocketsVersion.hasPrefix("4.1."))
        }
    }
}
