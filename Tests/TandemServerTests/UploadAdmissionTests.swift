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
}
