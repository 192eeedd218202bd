import Foundation
import FoundationNetworking
import Glibc
import Synchronization
import Testing
import TandemHTTP

/// A responder whose `/upload` bodies are admitted first (only `Authorization: Bearer ok…`) and
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
        switch head.path {
        case "/upload": HTTPBodyPolicy(limit: 64 << 20, spooled: true, admitFirst: true)
        case "/bodiless": HTTPBodyPolicy(limit: 1 << 20, requiresLength: false)
        default: HTTPBodyPolicy(limit: 1 << 20)
        }
    }

    /// Admits `Authorization: Bearer ok…`, charging the body to that header's value.
    func admission(for head: HTTPRequestHead) -> HTTPAdmission {
        admissions.add(1, ordering: .relaxed)
        guard let authorization = head.headers["authorization"], authorization.hasPrefix("Bearer ok") else {
            return .refused(HTTPResponse(status: 401, body: Array("who are you?".utf8)))
        }
        return .admitted(holder: authorization)
    }

    func errorResponse(status: Int, reason: String, head: HTTPRequestHead?) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(reason.utf8))
    }
}

final class StopFlag: Sendable {
    let value = Atomic<Bool>(false)
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

        /// `curl -X POST` sends neither content-length nor transfer-encoding: where the policy
        /// says the endpoint needs no body, that is an empty body (RFC 9112 §6.3), not 411, and
        /// the connection closes after the answer (lws would read what follows as the body);
        /// elsewhere it stays 411.
        @Test func aPOSTWithoutLengthIsAnEmptyBodyWhereThePolicyAllows() throws {
            let server = try startServer(responder: SpoolingResponder())
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port, timeout: 3)
            try client.send("POST /bodiless HTTP/1.1\r\nHost: x\r\n\r\n")
            let first = try client.readResponse()
            #expect(first.status == 200 && first.text == "memory 0", "\(first.status) \(first.text)")
            #expect(first.headers["connection"] == "close" && client.waitForClose(), "\(first.headers)")
            let again = try RawHTTPClient(port: server.port, timeout: 3)
            try again.send("POST /bodiless HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            let second = try again.readResponse()
            #expect(second.status == 200 && second.text == "memory 2", "\(second.status) \(second.text)")
            let other = try RawHTTPClient(port: server.port, timeout: 3)
            try other.send("POST /elsewhere HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try other.readResponse().status == 411)
            let chunked = try RawHTTPClient(port: server.port, timeout: 3)
            try chunked.send("POST /bodiless HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n")
            #expect(try chunked.readResponse().status == 411, "a chunked body is still refused")
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
            #expect(eventually { server.bodies.bufferedBytes == 0 && server.bodies.spooledBodies == 0 })
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

        /// Sends one body byte every `interval` until `stop` is set (the client trickles).
        static func trickle(_ client: RawHTTPClient, every interval: Double, until stop: StopFlag) {
            nonisolated(unsafe) let client = client
            Thread.detachNewThread {
                while !stop.value.load(ordering: .relaxed) {
                    guard (try? client.send(" ")) != nil else { return }
                    Thread.sleep(forTimeInterval: interval)
                }
            }
        }

        /// Issue 14 audit B1/B2: lws' body timeout restarts at every byte, so a client sending
        /// one byte a while kept its reservation (budget bytes, a spool slot) forever. A body
        /// now has a deadline, `max(bodyMinimumSeconds, length / bodyMinimumRate)`.
        @Test(arguments: ["/other", "/upload"])
        func aTricklingBodyGets408AtItsDeadlineAndItsReservationIsReleased(path: String) throws {
            let server = try startServer(responder: SpoolingResponder()) {
                $0.bodyMinimumSeconds = 1
                $0.bodyMinimumRate = 1 << 20
            }
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port, timeout: 8)
            try client.send("POST \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok\r\nContent-Length: 1000\r\n\r\n")
            #expect(eventually { server.bodies.bufferedBytes == 1000 || server.bodies.spooledBodies == 1 })
            let stop = StopFlag()
            defer { stop.value.store(true, ordering: .relaxed) }
            let started = Date()
            Self.trickle(client, every: 0.2, until: stop)
            let response = try client.readResponse()
            stop.value.store(true, ordering: .relaxed)
            let seconds = Date().timeIntervalSince(started)
            #expect(response.status == 408, "\(response.text)")
            #expect(response.text.contains("did not arrive within 1 s"), "\(response.text)")
            #expect(response.headers["connection"] == "close")
            #expect(seconds > 0.8 && seconds < 4, "answered after \(seconds) s")
            #expect(client.waitForClose())
            #expect(eventually { server.bodies.bufferedBytes == 0 && server.bodies.spooledBodies == 0 }, "\(server.bodies)")
        }

        @Test func aBodyArrivingInTimeIsNotCutOff() throws {
            let server = try startServer(responder: SpoolingResponder()) {
                $0.bodyMinimumSeconds = 1
                $0.bodyMinimumRate = 1 << 20
            }
            defer { server.shutdown() }
            let client = try RawHTTPClient(port: server.port)
            try client.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nab")
            Thread.sleep(forTimeInterval: 0.5)
            try client.send("cd")
            #expect(try client.readResponse().text == "memory 4")
            // The connection is kept, and the next request's head is not held to the old deadline.
            Thread.sleep(forTimeInterval: 0.8)
            try client.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nef")
            #expect(try client.readResponse().text == "memory 2")
        }

        /// Issue 14 audit B2: one holder (a user, the owner of upload URLs) took every spool slot.
        @Test func oneHolderGetsAtMostItsShareOfSpoolSlots() throws {
            let server = try startServer(responder: SpoolingResponder()) {
                $0.maxSpooledBodies = 8
                $0.maxSpooledBodiesPerHolder = 2
            }
            defer { server.shutdown() }
            let head = { (holder: String) in "POST /upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ok-\(holder)\r\nContent-Length: 10\r\n\r\n" }
            let first = try RawHTTPClient(port: server.port), second = try RawHTTPClient(port: server.port)
            try first.send(head("a") + "12345")
            try second.send(head("a") + "12345")
            #expect(eventually { server.bodies.spooledBodies == 2 })
            let third = try RawHTTPClient(port: server.port)
            try third.send(head("a"))
            let refused = try third.readResponse()
            #expect(refused.status == 429, "\(refused.text)")
            #expect(refused.text.contains("at most 2 at once"), "\(refused.text)")
            // Another holder is not affected.
            let other = try RawHTTPClient(port: server.port)
            try other.send(head("b") + "1234567890")
            #expect(try other.readResponse().text.hasPrefix("file 10 10 "))
            try first.send("67890")
            #expect(try first.readResponse().text.hasPrefix("file 10 10 "))
            // A slot given back is the holder's again.
            let fourth = try RawHTTPClient(port: server.port)
            try fourth.send(head("a") + "1234567890")
            #expect(try fourth.readResponse().text.hasPrefix("file 10 10 "))
        }

        /// Bodies no responder admitted are charged to the client's address.
        @Test func oneAddressGetsAtMostItsShareOfTheInMemoryBudget() throws {
            let server = try startServer(responder: SpoolingResponder()) { $0.maxBufferedBodyBytesPerHolder = 1500 }
            defer { server.shutdown() }
            let waiting = try RawHTTPClient(port: server.port)
            try waiting.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            #expect(eventually { server.bodies.bufferedBytes == 1000 })
            let refused = try RawHTTPClient(port: server.port)
            try refused.send("POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            let answer = try refused.readResponse()
            #expect(answer.status == 429, "\(answer.text)")
            try waiting.send(String(repeating: "b", count: 1000))
            #expect(try waiting.readResponse().text == "memory 1000")
            #expect(eventually { server.bodies.bufferedBytes == 0 })
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
