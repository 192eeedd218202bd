import Foundation
import Testing
import Synchronization
import TandemHTTP

extension EndToEndTests {
    /// Requests pipelined on one connection, sent in a single write, so libwebsockets reads the
    /// later ones ahead while the first is still with the responder. lws 4.1 cannot take a
    /// request with a body from that read-ahead (see `ReadAhead` in the engine): the server
    /// answers what it can, in order, then closes the connection, and the client retries the
    /// unanswered requests on a new one, as RFC 9112 (section 9.3.2) asks of pipelining
    /// clients. What must never happen: a hang, a spinning service thread, a wrong body.
    @Suite struct Pipelining {
        @Test(arguments: [2, 5])
        func pipelinedPostsInOneWriteAreEchoedInOrder(count: Int) throws {
            let responder = RecordingResponder()
            let requests = (0..<count).map { index in
                PipelinedRequest.post("/echo?n=\(index)", body: "{\"n\":\(index),\"pad\":\"\(String(repeating: "x", count: index * 7))\"}")
            }
            try withServerThenStop(responder) { server in
                try expectAnsweredInOrder(requests, port: server.port)
                #expect(responder.bodies == requests.map(\.body))
            }
        }

        /// Also with the inline responder, which completes each transaction while lws is still
        /// in the middle of the read that brought the request.
        @Test(arguments: [false, true])
        func pipelinedPostGetPostAreAnsweredInOrder(inline: Bool) throws {
            let responder = RecordingResponder()
            let requests = [
                PipelinedRequest.post("/echo?n=0", body: "first"),
                PipelinedRequest.get("/echo?n=1"),
                PipelinedRequest.post("/echo?n=2", body: "second"),
            ]
            try withServerThenStop(responder, configure: { $0.inlineResponder = inline }) { server in
                let connections = try expectAnsweredInOrder(requests, port: server.port)
                // The GET needs no body, so lws can take it from its read-ahead.
                #expect(connections <= 2)
                #expect(responder.bodies == ["first", "", "second"])
            }
        }

        /// Bodies larger than lws' 64 KiB read buffer, so a body is split over several reads and
        /// the next request starts in the middle of one; a zero-length POST (which lws can take
        /// from read-ahead); and a GET announcing a body.
        @Test func pipelinedLargeAndEmptyBodiesArriveIntact() throws {
            let responder = RecordingResponder()
            let sizes = [100_000, 3, 70_001, 0, 0, 1]
            var requests = sizes.enumerated().map { index, size in
                PipelinedRequest.post("/echo?n=\(index)",
                                      body: TestResponder.pattern(count: size + index).suffix(size).map { $0 })
            }
            requests.append(PipelinedRequest(head: "GET /echo?n=6 HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\n",
                                             body: Array("body".utf8), query: "n=6"))
            try withServerThenStop(responder) { server in
                try expectAnsweredInOrder(requests, port: server.port)
                #expect(responder.rawBodies == requests.map(\.bodyBytes))
            }
        }

        /// Pipelined requests the server refuses anyway (body over the limit, chunked, no
        /// length, malformed length) behind an answered one. lws expects a body for each, so
        /// the connection is closed before the first of them; sent on their own, each gets its
        /// error answer.
        @Test func pipelinedRefusedRequestsDoNotHurt() throws {
            try withServerThenStop(TestResponder(bodyLimit: 10)) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 5)
                try client.send("POST /echo?n=0 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nok"
                    + "POST /echo?n=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n01234567890"
                    + "POST /echo?n=2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n"
                    + "POST /echo?n=3 HTTP/1.1\r\nHost: x\r\n\r\n"
                    + "GET /echo?n=4 HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n")
                let first = try client.readResponse()
                #expect(first.text == "ok")
                #expect(client.waitForClose())
                for (request, status) in [
                    ("POST /echo?n=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\n01234567890", 413),
                    ("POST /echo?n=2 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nno\r\n0\r\n\r\n", 411),
                    ("POST /echo?n=3 HTTP/1.1\r\nHost: x\r\n\r\n", 411),
                    ("GET /echo?n=4 HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", 400),
                ] {
                    let retry = try RawHTTPClient(port: server.port, timeout: 5)
                    try retry.send(request)
                    #expect(try retry.readResponse().status == status)
                    #expect(retry.waitForClose())
                }
            }
        }

        /// A request sent after the previous response arrived is read from the socket, not from
        /// lws' read-ahead, and is served on the same connection however many times.
        @Test func sequentialPostsKeepTheConnection() throws {
            try withServerThenStop(TestResponder()) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 5)
                for index in 0..<50 {
                    let body = String(repeating: "\(index % 10)", count: index * 37)
                    try client.send("POST /echo?n=\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    let response = try client.readResponse()
                    #expect(response.headers["x-query"] == "n=\(index)")
                    #expect(response.text == body)
                }
                #expect(server.openConnections == 1)
            }
        }
    }
}

/// One request of a pipeline, with what its echo must look like.
struct PipelinedRequest {
    var head: String
    var bodyBytes: [UInt8]
    var query: String
    var body: String { String(decoding: bodyBytes, as: UTF8.self) }
    var wire: [UInt8] { Array(head.utf8) + bodyBytes }

    init(head: String, body: [UInt8], query: String) {
        self.head = head
        self.bodyBytes = body
        self.query = query
    }

    static func post(_ target: String, body: [UInt8]) -> PipelinedRequest {
        PipelinedRequest(head: "POST \(target) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n",
                         body: body, query: String(target.split(separator: "?")[1]))
    }

    static func post(_ target: String, body: String) -> PipelinedRequest {
        post(target, body: Array(body.utf8))
    }

    static func get(_ target: String) -> PipelinedRequest {
        PipelinedRequest(head: "GET \(target) HTTP/1.1\r\nHost: x\r\n\r\n", body: [],
                         query: String(target.split(separator: "?")[1]))
    }
}

/// Sends `requests` pipelined in one write; reads the answers in order until the server closes
/// the connection, then sends the unanswered rest on a new one, like a pipelining client
/// should. Every request must be echoed exactly, in order, and every connection must make
/// progress. Returns how many connections it took.
@discardableResult
func expectAnsweredInOrder(_ requests: [PipelinedRequest], port: Int,
                           sourceLocation: SourceLocation = #_sourceLocation) throws -> Int {
    var next = 0
    var connections = 0
    while next < requests.count, connections < requests.count {
        connections += 1
        let client = try RawHTTPClient(port: port, timeout: 5)
        try client.send(requests[next...].flatMap(\.wire))
        let before = next
        while next < requests.count {
            let response: RawHTTPClient.Response
            do {
                response = try client.readResponse()
            } catch let failure as RawHTTPClient.Failure where failure.description == "connection closed by server" {
                break
            }
            #expect(response.status == 200, sourceLocation: sourceLocation)
            #expect(response.headers["x-query"] == requests[next].query, sourceLocation: sourceLocation)
            #expect(response.body == requests[next].bodyBytes, "body of request \(next)", sourceLocation: sourceLocation)
            next += 1
        }
        #expect(next > before, "no progress on connection \(connections)", sourceLocation: sourceLocation)
        if next == before { break }
    }
    #expect(next == requests.count, sourceLocation: sourceLocation)
    return connections
}

/// Runs `exchange` against a new server; then, whether or not it failed, checks that another
/// client is still served and that `shutdown()` returns promptly (a spinning or stuck service
/// thread would make both hang).
func withServerThenStop(_ responder: any HTTPResponder,
                        configure: (inout HTTPServerConfiguration) -> Void = { _ in },
                        sourceLocation: SourceLocation = #_sourceLocation,
                        _ exchange: (HTTPServer) throws -> Void) throws {
    let server = try startServer(responder: responder, configure: configure)
    do {
        try exchange(server)
    } catch {
        Issue.record(error, sourceLocation: sourceLocation)
    }
    do {
        try expectServesOthers(server, sourceLocation: sourceLocation)
    } catch {
        Issue.record(error, sourceLocation: sourceLocation)
    }
    expectStopsPromptly(server, sourceLocation: sourceLocation)
}

func expectServesOthers(_ server: HTTPServer, sourceLocation: SourceLocation) throws {
    let other = try RawHTTPClient(port: server.port, timeout: 5)
    try other.send("POST /echo?other HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nother")
    let response = try other.readResponse()
    #expect(response.status == 200, sourceLocation: sourceLocation)
    #expect(response.text == "other", sourceLocation: sourceLocation)
    #expect(eventually { server.inFlightRequests == 0 }, sourceLocation: sourceLocation)
}

func expectStopsPromptly(_ server: HTTPServer, sourceLocation: SourceLocation) {
    let done = DispatchSemaphore(value: 0)
    let started = Date()
    Thread.detachNewThread {
        server.shutdown()
        done.signal()
    }
    let limit = server.configuration.shutdownGracePeriod + 2
    let stopped = done.wait(timeout: .now() + limit) == .success
    #expect(stopped, "shutdown() did not return within \(limit) s", sourceLocation: sourceLocation)
    if stopped {
        // Nothing is in flight, so the grace period is not needed.
        #expect(Date().timeIntervalSince(started) < 2, sourceLocation: sourceLocation)
    }
}

/// `TestResponder`, recording every body it was given, in order.
final class RecordingResponder: HTTPResponder {
    private let echo = TestResponder()
    private let received = Mutex<[[UInt8]]>([])

    var rawBodies: [[UInt8]] { received.withLock { $0 } }
    var bodies: [String] { rawBodies.map { String(decoding: $0, as: UTF8.self) } }

    func respond(to request: HTTPRequest) -> HTTPResponse {
        received.withLock { $0.append(request.body) }
        return echo.respond(to: request)
    }

    func bodyLimit(for head: HTTPRequestHead) -> Int { echo.bodyLimit(for: head) }

    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        echo.errorResponse(status: status, reason: reason, head: head)
    }
}

extension EndToEndTests {
    /// A request with a large body sent on a kept connection right after the previous answer
    /// was read: not pipelined, so never refused as read-ahead (`ReadAhead`). The body still
    /// arriving while the server looked at the socket made it look so: 1 to 2 uploads in 40
    /// were closed unanswered (stop 47).
    @Suite struct KeptConnectionBodies {
        @Test func largeBodiesRightAfterAnAnswerAreAllAnswered() throws {
            try withServerThenStop(TestResponder()) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 10)
                let body = TestResponder.pattern(count: 262_145)
                for index in 0..<150 {
                    try client.send("POST /echo?small=\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
                    #expect(try client.readResponse().text == "hello")
                    // The head and a first piece, then the rest in 64 KiB pieces a moment apart,
                    // as a client's kernel sends them on loopback.
                    let wire = Array("POST /echo?large=\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
                    var offset = 0
                    while offset < wire.count {
                        let end = min(wire.count, offset + 65_536)
                        try client.send(Array(wire[offset..<end]))
                        offset = end
                        usleep(UInt32(index % 4) * 50)
                    }
                    let response = try client.readResponse()
                    #expect(response.status == 200 && response.body.count == body.count, "request \(index)")
                }
            }
        }
    }
}
