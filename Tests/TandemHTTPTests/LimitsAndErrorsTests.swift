import Foundation
import FoundationNetworking
import Testing
import TandemHTTP

extension EndToEndTests {
    /// Failures the HTTP layer detects itself, answered through `errorResponse`.
    @Suite struct LimitsAndErrors {
        @Test func contentLengthOverTheLimitIs413BeforeAnyBodyAndTheServerKeepsServing() throws {
            let server = try startServer(responder: TestResponder(bodyLimit: 1000))
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\nExpect: 100-continue\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.text == "error 413: The body is larger than 1000 bytes.")
            #expect(response.headers["content-type"] == "text/plain")
            #expect(response.headers["connection"] == "close")
            let started = Date()
            #expect(client.waitForClose())
            #expect(Date().timeIntervalSince(started) < 1)

            // Without `expect`, the server waits a moment for the announced body, then closes
            // (after sending FIN with the answer, so the client sees the close at once).
            let silent = try RawHTTPClient(port: server.port)
            try silent.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n")
            #expect(try silent.readResponse().status == 413)
            #expect(silent.waitForClose())

            let next = try RawHTTPClient(port: server.port)
            try next.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "z", count: 1000))
            let accepted = try next.readResponse()
            #expect(accepted.status == 200)
            #expect(accepted.body.count == 1000)
        }

        @Test func refusedBodySentAnywayIsReadBeforeTheClose() throws {
            let server = try startServer(responder: TestResponder(bodyLimit: 1000))
            defer { server.shutdown() }
            // Head and body in one packet.
            let eager = try RawHTTPClient(port: server.port)
            try eager.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1500\r\n\r\n" + String(repeating: "b", count: 1500))
            #expect(try eager.readResponse().status == 413)
            #expect(eager.waitForClose())
            // The body follows after the answer arrived: sending it must not fail.
            let late = try RawHTTPClient(port: server.port)
            try late.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 200000\r\n\r\n")
            #expect(try late.readResponse().status == 413)
            for _ in 0..<20 {
                usleep(5_000)
                try late.send([UInt8](repeating: 7, count: 10_000))
            }
            #expect(late.waitForClose())
            #expect(eventually { server.openConnections == 0 })
        }

        /// curl (so URLSession on Linux) waits one second for `100 Continue` and then sends the
        /// body anyway; on a loaded machine that can be after the 413 came and before curl read
        /// it. The server used to close at once after a 413 to an `expect` head, and curl's send
        /// then failed with a broken pipe (seen once in CI as `HTTPErrorTests`' 413 test). Now
        /// the answer is followed by FIN and the body is read and dropped (decision E15): every
        /// byte of it can be sent, and the 413 is still there to read.
        @Test func aBodySentAfterThe413ToAnExpectHeadIsReadAndDropped() throws {
            let server = try startServer(responder: TestResponder(bodyLimit: 1000))
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            let length = 2 << 20
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\nExpect: 100-continue\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.headers["connection"] == "close")
            // The answer has come (so the server has decided to close); the body follows now.
            try client.send([UInt8](repeating: 0x20, count: length))
            #expect(client.waitForClose())
            #expect(eventually { server.openConnections == 0 })
        }

        @Test func bodyOverTheLimitSentByURLSessionIs413() async throws {
            let server = try startServer(responder: TestResponder(bodyLimit: 1000))
            defer { server.shutdown() }
            for size in [1500, 3 << 20] {
                var request = URLRequest(url: url(server, "/echo"))
                request.httpMethod = "POST"
                request.httpBody = Data(repeating: 1, count: size)
                let (data, response) = try await fetch(request)
                #expect(response.statusCode == 413)
                #expect(String(decoding: data, as: UTF8.self).hasPrefix("error 413"))
            }
            let (_, after) = try await fetch(url(server, "/after"))
            #expect(after.statusCode == 200)
        }

        @Test func chunkedBodyIsRefusedWith411() throws {
            let server = try startServer()
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 411)
            #expect(client.waitForClose())
        }

        @Test(arguments: [
            ("POST /echo HTTP/1.1\r\nHost: x\r\n\r\n", 411),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("GET /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 411),
            ("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 411),
        ])
        func malformedFramingIsRejectedAndTheConnectionClosed(request: String, status: Int) throws {
            let server = try startServer()
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status)
            #expect(response.text.hasPrefix("error \(status): "))
            #expect(client.waitForClose())
        }

        @Test func garbageAndLiesDoNotHurtTheServer() throws {
            let server = try startServer { $0.maxHeaderBytes = 4096; $0.idleTimeout = 2 }
            defer { server.shutdown() }
            let abuses: [[UInt8]] = [
                Array("HELLO WORLD\r\n\r\n".utf8),
                Array("GET\r\n\r\n".utf8),
                Array("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET /a%00b HTTP/1.1\r\nHost: x\r\n\r\n".utf8),
                Array("GET / HTTP/1.1\r\nX-Big: \(String(repeating: "a", count: 8000))\r\n\r\n".utf8),
                (0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919) },
                Array("GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".utf8),
                Array("GET / HTTP/1.1\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n".utf8),
                Array("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n".utf8),
            ]
            for abuse in abuses {
                let client = try RawHTTPClient(port: server.port)
                try? client.send(abuse)
                #expect(client.waitForClose(), "connection stays open after \(abuse.prefix(20))")
            }
            // A body shorter than its content-length, then the client goes away.
            let liar = try RawHTTPClient(port: server.port)
            try liar.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort")
            liar.close()
            // A body shorter than its content-length, and the client waits: lws times it out.
            let staller = try RawHTTPClient(port: server.port)
            try staller.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nshort")
            #expect(staller.waitForClose())

            // A body longer than its content-length: the rest is read as the next request.
            let overrunner = try RawHTTPClient(port: server.port)
            try overrunner.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nhello\r\n\r\n")
            let truncated = try overrunner.readResponse()
            #expect(truncated.text == "he")
            #expect(overrunner.waitForClose())

            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /fine HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().status == 200)
            client.close()
            #expect(eventually { server.openConnections == 0 && server.inFlightRequests == 0 })
        }

        @Test func fullWorkerQueueIsAnswered503() throws {
            let responder = TestResponder()
            let server = try startServer(responder: responder) { $0.workerCount = 1; $0.maxQueuedRequests = 1 }
            defer { server.shutdown() }
            let clients = try (0..<4).map { _ in try RawHTTPClient(port: server.port) }
            try clients[0].send("GET /sleep?ms=400&id=0 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { responder.activeCount == 1 })   // the only worker is busy
            try clients[1].send("GET /sleep?ms=1&id=1 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(eventually { server.inFlightRequests == 2 })  // queued: the queue is full
            for client in clients[2...] {
                try client.send("GET /sleep?ms=1&id=x HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 503)
                #expect(response.text == "error 503: Too many requests are queued.")
                #expect(response.headers["connection"] == nil)  // the connection stays usable
            }
            #expect(try clients[0].readResponse().text == "slept 0")
            #expect(try clients[1].readResponse().text == "slept 1")
            try clients[2].send("GET /sleep?ms=1&id=2 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try clients[2].readResponse().text == "slept 2")
        }

        @Test func responderHeadersAreSanitised() throws {
            struct Sloppy: HTTPResponder {
                func respond(to request: HTTPRequest) -> HTTPResponse {
                    HTTPResponse(status: 1234, headers: [
                        ("Content-Length", "999"), ("X-Evil", "a\r\nInjected: yes"), ("Bad Name", "v"),
                        ("X-Good", "fine"), ("X-Empty", ""),
                    ], body: Array("body".utf8))
                }
                func bodyLimit(for head: HTTPRequestHead) -> Int { 0 }
                func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
                    HTTPResponse(status: status)
                }
            }
            let server = HTTPServer(configuration: HTTPServerConfiguration(port: 0, workerCount: 1), responder: Sloppy())
            try server.start()
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.status == 500)
            #expect(response.headers["content-length"] == "4")
            #expect(response.text == "body")
            #expect(response.headers["x-evil"] == nil)
            #expect(response.headers["injected"] == nil)
            #expect(response.headers["x-good"] == "fine")
            #expect(response.headers["x-empty"] == "")
        }
    }
}
