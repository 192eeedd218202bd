import Foundation
import FoundationNetworking
import Testing
import TandemHTTP

/// Real servers on loopback port 0, talked to with URLSession and raw sockets. Serialized
/// (with the suites nested in it): timing-sensitive tests should not share the two cores.
@Suite(.serialized) struct EndToEndTests {
    @Test func getEchoesPathQueryAndHeaders() async throws {
        let server = try startServer()
        defer { server.shutdown() }
        var request = URLRequest(url: url(server, "/records/query?zone=_defaultZone&name=a%20b&x=1%2B2"))
        request.setValue("abc123", forHTTPHeaderField: "X-Apple-CloudKit-Request-KeyID")
        request.setValue("Bearer token", forHTTPHeaderField: "Authorization")
        request.setValue("TandemTests/1.0", forHTTPHeaderField: "User-Agent")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let (data, response) = try await fetch(request)
        #expect(response.statusCode == 200)
        #expect(data.isEmpty)
        #expect(response.value(forHTTPHeaderField: "x-method") == "GET")
        #expect(response.value(forHTTPHeaderField: "x-path") == "/records/query")
        #expect(response.value(forHTTPHeaderField: "x-query") == "zone=_defaultZone&name=a%20b&x=1%2B2")
        #expect(response.value(forHTTPHeaderField: "x-remote") == "127.0.0.1")
        #expect(response.value(forHTTPHeaderField: "x-echo-x-apple-cloudkit-request-keyid") == "abc123")
        #expect(response.value(forHTTPHeaderField: "x-echo-authorization") == "Bearer token")
        #expect(response.value(forHTTPHeaderField: "x-echo-user-agent") == "TandemTests/1.0")
        #expect(response.value(forHTTPHeaderField: "x-echo-accept") == "application/json")
        #expect(response.value(forHTTPHeaderField: "x-echo-host") == "127.0.0.1:\(server.port)")
        #expect(response.value(forHTTPHeaderField: "content-length") == "0")
    }

    @Test(arguments: [0, 1, 65_537, 5 << 20])
    func postBodyIsEchoedByteExact(size: Int) async throws {
        let server = try startServer(responder: TestResponder(bodyLimit: 8 << 20))
        defer { server.shutdown() }
        var body = TestResponder.pattern(count: size)
        if size > 0 { body[0] = 0 }
        if size > 10 { body[size / 2] = 0; body[size - 1] = 0 }
        var request = URLRequest(url: url(server, "/echo"))
        request.httpMethod = "POST"
        request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(body)
        let started = Date()
        let (data, response) = try await fetch(request)
        #expect(response.statusCode == 200)
        #expect(data.count == size)
        #expect(Array(data) == body)
        #expect(response.value(forHTTPHeaderField: "x-echo-content-type") == "application/octet-stream")
        // curl pauses a second on `expect: 100-continue` unless the server answers it.
        #expect(Date().timeIntervalSince(started) < 0.9)
    }

    @Test func putPatchDeleteAndOptionsReachTheResponder() async throws {
        let server = try startServer()
        defer { server.shutdown() }
        for method in ["PUT", "PATCH", "DELETE", "OPTIONS"] {
            var request = URLRequest(url: url(server, "/m"))
            request.httpMethod = method
            if method != "DELETE" && method != "OPTIONS" { request.httpBody = Data("x".utf8) }
            let (data, response) = try await fetch(request)
            #expect(response.statusCode == 200)
            #expect(response.value(forHTTPHeaderField: "x-method") == method)
            #expect(data.count == (method == "PUT" || method == "PATCH" ? 1 : 0))
        }
    }

    @Test func largeResponseArrivesIntact() async throws {
        let server = try startServer()
        defer { server.shutdown() }
        let size = 20 << 20
        let (data, response) = try await fetch(url(server, "/big?bytes=\(size)"))
        #expect(response.statusCode == 200)
        #expect(data.count == size)
        #expect(fnv1a(data) == fnv1a(TestResponder.pattern(count: size)))
    }

    @Test func largeResponseSurvivesASlowReader() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let size = 8 << 20
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /big?bytes=\(size) HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(300_000)  // let the socket buffers fill so lws must write across many callbacks
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.body.count == size)
        #expect(fnv1a(response.body) == fnv1a(TestResponder.pattern(count: size)))
    }

    @Test func keepAliveServesSequentialAndPipelinedRequestsOnOneConnection() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        for index in 0..<3 {
            try client.send("POST /echo?n=\(index) HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "hello")
            #expect(response.headers["x-query"] == "n=\(index)")
            #expect(response.headers["connection"] == nil)
        }
        let pipelined = (0..<3).map { "GET /echo?p=\($0) HTTP/1.1\r\nHost: x\r\n\r\n" }.joined()
        try client.send(pipelined)
        for index in 0..<3 {
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.headers["x-query"] == "p=\(index)")
        }
        #expect(server.openConnections == 1)
    }

    @Test func http10KeepAliveIsHonouredAndPlainHttp10Closes() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let first = try client.readResponse()
        #expect(first.status == 200)
        #expect(first.headers["connection"]?.lowercased() == "keep-alive")
        try client.send("GET /b HTTP/1.0\r\n\r\n")
        let second = try client.readResponse()
        #expect(second.headers["x-path"] == "/b")
        #expect(second.headers["connection"]?.lowercased() == "close")
        #expect(client.waitForClose())
    }

    @Test func headResponseHasLengthButNoBody() throws {
        let server = try startServer()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: server.port)
        try client.send("HEAD /big?bytes=1234 HTTP/1.1\r\nHost: x\r\n\r\n")
        let head = try client.readResponse(expectBody: false)
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "1234")
        try client.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n")
        let next = try client.readResponse()
        #expect(next.headers["x-method"] == "GET")
    }
}
