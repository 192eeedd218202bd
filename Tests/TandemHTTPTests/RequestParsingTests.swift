import Foundation
import FoundationNetworking
import Testing
import TandemHTTP

extension EndToEndTests {
    /// What reaches the responder from URIs and headers, given libwebsockets' parser.
    @Suite struct RequestParsing {
        @Test func pathAndQueryArriveCanonicallyEncoded() throws {
            let server = try startServer()
            defer { server.shutdown() }
            let cases: [(sent: String, path: String, query: String)] = [
                ("/a%20b/c?x=%3D&y=a+b&z=1;w=2", "/a%20b/c", "x=%3D&y=a%20b&z=1&w=2"),
                ("/a/./b/../c//d", "/a/c/d", ""),
                ("/plain?", "/plain", ""),
                ("/caf%C3%A9?name=%C3%A9t%C3%A9&a=%26%3B", "/caf%C3%A9", "name=%C3%A9t%C3%A9&a=%26%3B"),
                ("/q?flag&empty=&&last=1", "/q", "flag&empty=&last=1"),
                ("/q?a=1&", "/q", "a=1"),
                ("/q?a=%2F&b=/x", "/q", "a=/&b=/x"),
            ]
            let client = try RawHTTPClient(port: server.port)
            for (sent, path, query) in cases {
                try client.send("GET \(sent) HTTP/1.1\r\nHost: x\r\n\r\n")
                let response = try client.readResponse()
                #expect(response.status == 200, "\(sent)")
                #expect(response.headers["x-path"] == path, "\(sent)")
                #expect(response.headers["x-query"] == query, "\(sent)")
            }
        }

        @Test func knownAndConfiguredCustomHeadersAreDelivered() throws {
            let server = try startServer { $0.customHeaderNames.append("X-Trace") }
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("""
                GET /h HTTP/1.1\r
                Host: example.test\r
                Authorization: Bearer a.b.c\r
                X-Apple-CloudKit-Request-KeyID: key-1\r
                X-Apple-CloudKit-Request-ISO8601Date: 2026-01-01T00:00:00Z\r
                X-Apple-CloudKit-Request-SignatureV1: c2lnbmF0dXJl\r
                x-trace: t1   \r
                X-Not-Configured: hidden\r
                If-None-Match: "e1"\r
                Accept: a/b\r
                Accept: c/d\r
                \r

                """)
            let response = try client.readResponse()
            #expect(response.headers["x-echo-host"] == "example.test")
            #expect(response.headers["x-echo-authorization"] == "Bearer a.b.c")
            #expect(response.headers["x-echo-x-apple-cloudkit-request-keyid"] == "key-1")
            #expect(response.headers["x-echo-x-apple-cloudkit-request-iso8601date"] == "2026-01-01T00:00:00Z")
            #expect(response.headers["x-echo-x-apple-cloudkit-request-signaturev1"] == "c2lnbmF0dXJl")
            #expect(response.headers["x-echo-x-trace"] == "t1")
            #expect(response.headers["x-echo-x-not-configured"] == nil)
            #expect(response.headers["x-echo-if-none-match"] == "\"e1\"")
            // Repeated headers are joined with ","; lws keeps the blanks it found after the
            // first occurrence.
            let accept = try #require(response.headers["x-echo-accept"])
            #expect(accept.hasPrefix("a/b,") && accept.hasSuffix("c/d"))
        }

        @Test func urlSessionStreamedUploadWithoutLengthIsRefusedWith411() async throws {
            let server = try startServer()
            defer { server.shutdown() }
            var request = URLRequest(url: url(server, "/echo"))
            request.httpMethod = "POST"
            request.httpBodyStream = InputStream(data: Data("{}".utf8))
            let (_, response) = try await fetch(request)
            #expect(response.statusCode == 411)
        }

        @Test func expectContinueIsAnsweredBeforeTheBody() throws {
            let server = try startServer()
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try client.readResponse()
            #expect(interim.status == 100)
            try client.send("hello")
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.text == "hello")
        }

        @Test func getWithABodyGetsItsBody() throws {
            let server = try startServer()
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("GET /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            let response = try client.readResponse()
            #expect(response.text == "abc")
            try client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            let empty = try client.readResponse()
            #expect(empty.status == 200)
            #expect(empty.body.isEmpty)
            try client.send("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
            #expect(try client.readResponse().headers["x-method"] == "PUT")
        }
    }
}
