import Foundation
import Testing
import TandemHTTP

extension EndToEndTests {
    /// A client may stop sending once its request is out (`shutdown(SHUT_WR)`, as `nc -N` or a
    /// script piping one request does) and still reads the answer: the FIN that follows the
    /// request is read only after the answer is handed over, then the connection closes.
    /// Before, the FIN of a request a worker answered was read first when reading resumed for
    /// the answer's write, and the connection closed unanswered while the write was applied.
    @Suite struct HalfClose {
        struct Case: CustomTestStringConvertible, Sendable {
            var description: String
            var head: String
            var body: [UInt8] = []
            /// Milliseconds between the head and the body (0: one write).
            var bodyAfter: Int = 0
            /// Worker admission and a spooled body (`SpoolingResponder`) rather than `TestResponder`.
            var admitted = false
            var receiveBuffer: Int32?
            var answer: [UInt8]
            var testDescription: String { description }
        }

        static let upload = TestResponder.pattern(count: 100_000)

        static let cases: [Case] = [
            Case(description: "a POST whose body came with its head",
                 head: "POST /echo?n=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", body: Array("hello".utf8),
                 answer: Array("hello".utf8)),
            Case(description: "a POST whose body came 100 ms after its head",
                 head: "POST /echo?n=2 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n", body: Array("later".utf8), bodyAfter: 100,
                 answer: Array("later".utf8)),
            Case(description: "a POST the responder takes 300 ms over",
                 head: "POST /sleep?ms=300&id=p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n", body: Array("abc".utf8),
                 answer: Array("slept p".utf8)),
            Case(description: "a GET the responder takes 300 ms over",
                 head: "GET /sleep?ms=300&id=g HTTP/1.1\r\nHost: x\r\n\r\n", answer: Array("slept g".utf8)),
            Case(description: "a 3 MB answer read through a 4 KiB receive buffer",
                 head: "GET /big?bytes=3000000 HTTP/1.1\r\nHost: x\r\n\r\n", receiveBuffer: 4096,
                 answer: TestResponder.pattern(count: 3_000_000)),
            Case(description: "an upload admitted by a worker and spooled to disk",
                 head: "POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok1\r\nContent-Length: \(upload.count)\r\n\r\n",
                 body: upload, admitted: true,
                 answer: Array("file \(upload.count) \(upload.count) \(fnv1a(upload))".utf8)),
        ]

        @Test(arguments: cases)
        func aClientThatStopsSendingAfterItsRequestStillGetsTheAnswer(_ c: Case) throws {
            let responder: any HTTPResponder = c.admitted ? SpoolingResponder() : TestResponder()
            let server = try startServer(responder: responder)
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port, timeout: 10, receiveBuffer: c.receiveBuffer)
            if c.bodyAfter > 0 {
                try client.send(c.head)
                usleep(UInt32(c.bodyAfter * 1000))
                try client.send(c.body)
            } else {
                try client.send(Array(c.head.utf8) + c.body)
            }
            client.finishSending()
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.body == c.answer)
            #expect(client.waitForClose())
            // The server closes its side once the answer is out: the client sent its last.
            #expect(eventually { server.openConnections == 0 })
        }
    }
}
