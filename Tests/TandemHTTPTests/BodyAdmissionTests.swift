import Foundation
import FoundationNetworking
import Glibc
import Synchronization
import Testing
import TandemHTTP

/// A responder whose `/upload` bodies are admitted first (only `Authorization: Bearer ok`) and
/// spooled to a file; it answers the spooled size and checksum.
final class SpoolingResponder: HTTPResponder, @unchecked Sendable {
    let admissions = Atomic<Int>(0)

    func respond(to request: HTTPRequest) -> HTTPResponse {
        guard let file = request.bodyFile else { return HTTPResponse(status: 200, body: Array("memory \(request.body.count)".utf8)) }
        do {
            let (path, size) = try file.finish()
            let bytes = FileManager.default.contents(atPath: path).map { [UInt8]($0) } ?? []
            return HTTPResponse(status: 200, body: Array("file \(size) \(bytes.count) \(fnv1a(bytes))".utf8))
        } catch {
            return HTTPResponse(status: 500, body: Array(error.reason.utf8))
        }
    }

    func bodyLimit(for head: HTTPRequestHead) -> Int { 64 << 20 }

    func bodyPolicy(for head: HTTPRequestHead) -> HTTPBodyPolicy {
        head.path == "/upload" ? HTTPBodyPolicy(limit: 64 << 20, spooled: true, admitFirst: true) : HTTPBodyPolicy(limit: 1 << 20)
    }

    func admit(_ head: HTTPRequestHead) -> HTTPResponse? {
        admissions.add(1, ordering: .relaxed)
        return head.headers["authorization"] == "Bearer ok" ? nil : HTTPResponse(status: 401, body: Array("who are you?".utf8))
    }

    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(reason.utf8))
    }
}

extension EndToEndTests {
    /// Bodies are taken only from admitted senders, large ones go to disk, and what the server
    /// holds of them in memory is bounded.
    @Suite struct BodyAdmission {
        @Test func aRefusedHeadIsAnsweredWithoutWaitingForItsBody() throws {
            let responder = SpoolingResponder()
            let server = try startServer(responder: responder)
            defer { server.shutdown() }
            for headers in ["", "Authorization: Bearer forged\r\n", "Authorization: Bearer forged\r\nExpect: 100-continue\r\n"] {
                let client = try RawHTTPClient(port: server.port, timeout: 3)
                try client.send("POST /upload HTTP/1.1\r\nHost: x\r\n\(headers)Content-Length: 52428800\r\n\r\n")
                let started = Date()
                let response = try client.readResponse()
                #expect(response.status == 401, "\(headers)")
                #expect(response.text == "who are you?")
                #expect(Date().timeIntervalSince(started) < 2)
                #expect(client.waitForClose())
            }
            #expect(server.bodies.peakBufferedBytes == 0)
            #expect(eventually { server.bodies.spooledBodies == 0 })
        }

        @Test func anAdmittedBodyIsSpooledToAFileWithBoundedMemory() async throws {
            let server = try startServer(responder: SpoolingResponder()) { $0.spoolWindow = 256 * 1024 }
            defer { server.shutdown() }
            let body = TestResponder.pattern(count: 24 << 20)
            var request = URLRequest(url: url(server, "/upload"))
            request.httpMethod = "POST"
            request.httpBody = Data(body)
            request.setValue("Bearer ok", forHTTPHeaderField: "Authorization")
            let (data, response) = try await fetch(request)
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self) == "file \(body.count) \(body.count) \(fnv1a(body))")
            // The window, plus what one read can bring beyond it (lws reads 64 KiB at a time).
            #expect(server.bodies.peakBufferedBytes <= 256 * 1024 + 2 * 65536, "\(server.bodies)")
            #expect(eventually { server.bodies == HTTPBodyFigures(bufferedBytes: 0, peakBufferedBytes: server.bodies.peakBufferedBytes, spooledBodies: 0) })
        }

        @Test func bodySentWithTheHeadIsKeptWhileTheHeadIsAdmitted() throws {
            let server = try startServer(responder: SpoolingResponder())
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            let body = TestResponder.pattern(count: 30_000)
            try client.send(Array("POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\nContent-Length: 30000\r\n\r\n".utf8) + body)
            let response = try client.readResponse()
            #expect(response.text == "file 30000 30000 \(fnv1a(body))")
            // The connection stays usable.
            try client.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            #expect(try client.readResponse().text == "memory 3")
        }

        @Test func spooledBodiesBeyondTheCapAreRefusedWith503() throws {
            let server = try startServer(responder: SpoolingResponder()) { $0.maxSpooledBodies = 2 }
            defer { server.shutdown() }
            let head = "POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\nContent-Length: 10\r\n\r\n"
            let first = try RawHTTPClient(port: server.port), second = try RawHTTPClient(port: server.port)
            try first.send(head + "12345")
            try second.send(head + "12345")
            #expect(eventually { server.bodies.spooledBodies == 2 })
            let third = try RawHTTPClient(port: server.port)
            try third.send(head)
            #expect(try third.readResponse().status == 503)
            try first.send("67890")
            try second.send("67890")
            #expect(try first.readResponse().text.hasPrefix("file 10 10 "))
            #expect(try second.readResponse().text.hasPrefix("file 10 10 "))
            #expect(eventually { server.bodies.spooledBodies == 0 })
        }

        @Test func inMemoryBodiesBeyondTheBudgetAreRefusedWith503() throws {
            let server = try startServer(responder: SpoolingResponder()) { $0.maxBufferedBodyBytes = 1500 }
            defer { server.shutdown() }
            let waiting = try RawHTTPClient(port: server.port)
            try waiting.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            #expect(eventually { server.bodies.bufferedBytes == 1000 })
            let refused = try RawHTTPClient(port: server.port)
            try refused.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            #expect(try refused.readResponse().status == 503)
            try waiting.send(String(repeating: "b", count: 1000))
            #expect(try waiting.readResponse().text == "memory 1000")
            #expect(eventually { server.bodies.bufferedBytes == 0 })
        }
    }
}
