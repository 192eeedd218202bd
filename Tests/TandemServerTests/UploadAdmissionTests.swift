import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Upload bodies are not read before the sender is known (BodyAdmission; issue 14): each of
/// these heads announces a maximal body and sends none of it, and is answered at once.
@Suite struct UploadAdmissionTests {
    static let server = LazyTestServer()

    static let heads: [(label: String, path: String, authorization: String?, status: Int, code: String)] = [
        ("asset upload to an unknown URL", "/upload/1/up_unknown", nil, 404, "NOT_FOUND"),
        ("asset upload over 50 MiB", "/upload/1/up_unknown", nil, 413, "LIMIT_EXCEEDED"),
        ("a PUT of 50 MiB to an upload URL", "/upload/1/up_unknown", nil, 413, "LIMIT_EXCEEDED"),
        ("journal upload without credentials", "/journal/1/\(TestServer.container)/development/00000000-0000-0000-0000-000000000001?participantID=00000000-0000-0000-0000-000000000002",
         nil, 421, "AUTHENTICATION_REQUIRED"),
        ("journal upload with a forged token", "/journal/1/\(TestServer.container)/development/00000000-0000-0000-0000-000000000001?participantID=00000000-0000-0000-0000-000000000002",
         "Bearer forged", 401, "AUTHENTICATION_FAILED"),
        ("journal upload to a session the caller has not joined", "/journal/1/\(TestServer.container)/development/00000000-0000-0000-0000-000000000001?participantID=00000000-0000-0000-0000-000000000002",
         "Bearer {token}", 404, "NOT_FOUND"),
    ]

    @Test(arguments: heads.map(\.label))
    func aRefusedUploadIsAnsweredBeforeItsBody(label: String) throws {
        let server = try Self.server.server
        let row = Self.heads.first { $0.label == label }!
        let length = row.status == 413 ? Limits.assetBytes + 1 : (row.path.hasPrefix("/upload") ? Limits.assetBytes : Limits.journalAttachmentBytes)
        let socket = try RawSocket(port: server.port)
        let method = label.contains("PUT") ? "PUT" : "POST"
        var head = "\(method) \(row.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: \(length)\r\n"
        if let authorization = row.authorization { head += "Authorization: \(authorization.replacingOccurrences(of: "{token}", with: server.token))\r\n" }
        socket.send(head + "\r\n")
        let reply = socket.readUntilClosed(seconds: 5)
        #expect(reply.status == row.status, "\(label): \(reply.text)")
        #expect(reply.body.contains("\"serverErrorCode\":\"\(row.code)\"") || reply.body.contains("\"serverErrorCode\": \"\(row.code)\""), "\(reply.text)")
        #expect(reply.closed && reply.seconds < 3, "answered and closed without waiting for the body (\(reply.seconds) s)")
        // Rows run in parallel on one server: wait for the others' refusals to finish too.
        var metrics = ""
        let deadline = Date().addingTimeInterval(5)
        repeat {
            metrics = try server.request("GET", "\(server.baseURL)/metrics").text
            if metrics.contains("tandem_http_bodies_spooled 0\n") { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(metrics.contains("tandem_http_bodies_spooled 0\n"), "every refused upload gave its slot back")
    }

    @Test func aLargeUploadIsSpooledToDiskNotMemory() throws {
        let server = try TestServer()
        let tokens = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]])
        let url = try #require(tokens.json["tokens"]?.arrayValue?.first?["url"]?.stringValue)
        let bytes = Data((0..<(40 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) })
        let uploaded = try server.request("POST", url, body: bytes, token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        #expect(uploaded.json["singleFile"]?["size"]?.int64Value == Int64(bytes.count))
        let metrics = try server.request("GET", "\(server.baseURL)/metrics").text
        let peak = metrics.split(separator: "\n").first { $0.hasPrefix("tandem_http_body_bytes_buffered_peak ") }
            .flatMap { Int($0.split(separator: " ")[1]) }
        let held = try #require(peak, "\(metrics)")
        // One spool window (1 MiB) and a read beyond it; the whole body would be 40 MiB.
        #expect(held <= (1 << 20) + (128 << 10), "peak \(held) bytes held for a 40 MiB upload")
    }

    /// The figure `name` from /metrics.
    static func metric(_ server: TestServer, _ name: String) throws -> Int? {
        let text = try server.request("GET", "\(server.baseURL)/metrics").text
        return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.split(separator: " ")[1]) }
    }

    /// Audit B1: 64 connections with no token announcing 2 MiB JSON bodies (and sending one
    /// byte) held the whole 128 MiB in-memory budget, and every signed-in request with a body
    /// got 503. A route that needs a user now authenticates from the head: 421 / 401 at once.
    @Test func aJSONBodyIsNotReadBeforeItsSenderIsAuthenticated() throws {
        let server = try TestServer()
        let path = "/database/1/\(TestServer.container)/development/private/records/modify"
        var sockets: [RawSocket] = []
        for index in 0..<64 {
            let socket = try RawSocket(port: server.port)
            let authorization = index % 2 == 0 ? "" : "Authorization: Bearer forged\r\n"
            socket.send("POST \(path) HTTP/1.1\r\nHost: x\r\n\(authorization)Content-Length: 2097152\r\n\r\n{")
            sockets.append(socket)
        }
        for (index, socket) in sockets.enumerated() {
            let reply = socket.readUntilClosed(seconds: 5)
            let (status, code) = index % 2 == 0 ? (421, "AUTHENTICATION_REQUIRED") : (401, "AUTHENTICATION_FAILED")
            #expect(reply.status == status, "\(index): \(reply.text.prefix(300))")
            #expect(reply.body.contains(code), "\(reply.body)")
            #expect(reply.closed && reply.seconds < 3)
        }
        #expect(try Self.metric(server, "tandem_http_body_bytes_buffered_peak") ?? -1 < 1 << 20, "no 2 MiB body was reserved")
        let lookup = try server.post("records/lookup", ["records": [["recordName": "nothing-here"]]])
        #expect(lookup.status == 200, "\(lookup.text)")
        // The answer before the body is the route's own: the sign-in redirect of a 421 included.
        let socket = try RawSocket(port: server.port)
        socket.send("POST \(path)?ckAPIToken=nope HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
        #expect(socket.readUntilClosed(seconds: 5).status == 401, "an unknown API token is refused from the head too")
    }

    /// Audit B1, the routes open to anyone (public-database reads): their bodies are charged to
    /// the client's address, which may hold at most 16 MiB of the 128 MiB, so one address
    /// cannot take the budget from signed-in users.
    @Test func anonymousBodiesFromOneAddressCannotSpendTheWholeBudget() throws {
        let server = try TestServer()
        let path = "/database/1/\(TestServer.container)/development/public/records/query"
        var sockets: [RawSocket] = []
        var throttled = 0
        for _ in 0..<64 {
            let socket = try RawSocket(port: server.port)
            socket.send("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n{")
            sockets.append(socket)
        }
        // Admissions finish in any order; a refused connection closes within 2 s of its answer.
        Thread.sleep(forTimeInterval: 2.5)
        var waiting = 0
        for socket in sockets {
            let reply = socket.readUntilClosed(seconds: 0.2)
            if reply.status == 429 && reply.body.contains("THROTTLED") && reply.header("retry-after") != nil { throttled += 1 }
            if reply.status == nil && !reply.closed { waiting += 1 }
        }
        #expect(throttled == 56 && waiting == 8, "an address holds at most 8 bodies of 2 MiB (\(throttled) refused, \(waiting) waiting)")
        #expect(try Self.metric(server, "tandem_http_body_bytes_buffered") == 16 << 20)
        let lookup = try server.post("records/lookup", ["records": [["recordName": "nothing-here"]]])
        #expect(lookup.status == 200, "\(lookup.text)")
        withExtendedLifetime(sockets) {}
    }

    /// Audit B2: one user with 32 upload URLs and 32 stalled 50 MiB uploads took every spool
    /// slot, and another user's 5-byte upload got 503. A user (the owner of the upload URL)
    /// may have at most 4 spooled bodies being received.
    @Test func oneUserCannotTakeEverySpoolSlot() throws {
        let server = try TestServer()
        let tokens = try server.post("assets/upload", ["tokens": .array((0..<5).map { _ in ["recordType": "Photo", "fieldName": "photo"] })])
        let urls = try #require(tokens.json["tokens"]?.arrayValue?.compactMap { $0["url"]?.stringValue })
        #expect(urls.count == 5)
        var stalled: [RawSocket] = []
        for url in urls.prefix(4) {
            let socket = try RawSocket(port: server.port)
            socket.send("POST \(URL(string: url)!.path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(Limits.assetBytes)\r\n\r\nx")
            stalled.append(socket)
        }
        var spooled: Int?
        let deadline = Date().addingTimeInterval(5)
        repeat {
            spooled = try Self.metric(server, "tandem_http_bodies_spooled")
            if spooled == 4 { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(spooled == 4)
        let fifth = try RawSocket(port: server.port)
        fifth.send("POST \(URL(string: urls[4])!.path) HTTP/1.1\r\nHost: x\r\nContent-Length: \(Limits.assetBytes)\r\n\r\n")
        let reply = fifth.readUntilClosed(seconds: 5)
        #expect(reply.status == 429, "\(reply.text.prefix(400))")
        #expect(reply.body.contains("THROTTLED") && reply.body.contains("at most 4 at once"), "\(reply.body)")

        // Another user's small upload goes through.
        _ = try TestServer.admin(["user", "add", "--email", "bob@example.com", "--name", "Bob", "--data", server.dataDirectory])
        let bob = try TestServer.admin(["token", "create", "--user", "bob@example.com", "--data", server.dataDirectory])
        let bobs = try server.post("assets/upload", ["tokens": [["recordType": "Photo", "fieldName": "photo"]]], token: .some(bob))
        let bobURL = try #require(bobs.json["tokens"]?.arrayValue?.first?["url"]?.stringValue, "\(bobs.text)")
        let uploaded = try server.request("POST", bobURL, body: Data("hello".utf8), token: .some(nil), headers: ["Content-Type": "application/octet-stream"])
        #expect(uploaded.status == 200, "\(uploaded.text)")
        withExtendedLifetime(stalled) {}
    }
}
