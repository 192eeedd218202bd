import Foundation
import Testing
import TandemCore
import TandemTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Clients that ask for a response and do not read it (decisions E39; stop 46's review).
@Suite struct UnreadResponseTests {
    /// Pipelined requests whose answers are never read. Two `GET /openapi.json`: lws offered
    /// the second, read ahead, on every pass of its loop while the first could not be written,
    /// and the service thread spun at 100% of a core until lws' timeout 30 s later (E39).
    /// 3,000 `GET /healthz`: after each transaction lws waits for `POLLOUT` before it parses the
    /// next request, and with the socket full the requests still unread kept `POLLIN` set and
    /// its loop from waiting, until the head deadline closed the connection 5 s later (E41).
    @Test(arguments: [(2, openAPI), (3_000, healthCheck)])
    func pipelinedRequestsNobodyReadsTheAnswersOfDoNotSpinTheServer(count: Int, request: String) throws {
        let server = try TestServer()
        let socket = try #require(Self.unreadConnection(port: server.port, requests: count, request: request))
        defer { close(socket) }
        try Self.expectNoSpin(server)
        #expect(try DescriptorShortageTests.fetch("/healthz", port: server.port).hasPrefix("HTTP/1.1 200"))
    }

    /// A download of several writes that the client stops reading, with a request pipelined
    /// after it: each write went into the socket whole, lws waited for `POLLOUT` between them
    /// while the request it had read ahead kept its loop from waiting, and the server spent a
    /// core for as long as the download lasted (stop 46's second review: an 8 MB asset read
    /// at 5 KB/s, 11 s of CPU in 11.5 s). The socket's own buffers, not a small receive
    /// buffer, fill here, so no write is taken only in part.
    @Test func aDownloadNobodyReadsWithARequestPipelinedAfterItDoesNotSpinTheServer() throws {
        let server = try TestServer()
        let path = try Self.bigAsset(server)
        let socket = try #require(DescriptorShortageTests.connection(port: server.port))
        defer { close(socket) }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8)
        #expect(send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
        var buffer = [UInt8](repeating: 0, count: 8_192)
        #expect(recv(socket, &buffer, buffer.count, 0) > 0)
        try Self.expectNoSpin(server)
    }

    /// The same client, reading after 2 s (within the head deadline): every answer comes.
    @Test func aClientThatPipelinesThousandsAndReadsLateGetsEveryAnswer() throws {
        let server = try TestServer()
        let socket = try #require(Self.unreadConnection(port: server.port, requests: 3_000, request: Self.healthCheck))
        defer { close(socket) }
        Thread.sleep(forTimeInterval: 2)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let statusLine = Array("HTTP/1.1 200".utf8)
        var received: [UInt8] = []
        var answers = 0
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while answers < 3_000 {
            let count = recv(socket, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            received += buffer[..<count]
            // Count whole status lines, keeping a tail that may hold the start of the next.
            var index = 0
            while index + statusLine.count <= received.count {
                if received[index..<(index + statusLine.count)].elementsEqual(statusLine) {
                    answers += 1
                    index += statusLine.count
                } else {
                    index += 1
                }
            }
            received.removeFirst(index)
        }
        #expect(answers == 3_000)
    }

    /// Downloads read for a while, then no more, each with one byte sent after its request
    /// (review 62): the loop resumed a paused connection whose socket could take more, lws
    /// flushed what it held, the socket was full again, and with lws holding nothing the
    /// connection was not paused again: the byte kept `POLLIN` set while lws waited for
    /// `POLLOUT`, 100% of a core until lws' timeout 30 s later.
    @Test func downloadsStoppedPartWayWithAByteAfterTheirRequestDoNotSpinTheServer() throws {
        let server = try TestServer()
        let path = try Self.bigAsset(server)
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for index in 0..<10 {
            let socket = try #require(DescriptorShortageTests.connection(port: server.port, receiveTimeout: 5) { socket in
                var size: Int32 = 1_024
                setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
                var segment: Int32 = 536
                setsockopt(socket, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
            })
            sockets.append(socket)
            let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nX".utf8)
            #expect(send(socket, request, request.count, Int32(MSG_NOSIGNAL)) == request.count)
            // Read 100 KB to 1 MB of the answer, at about 1 MB/s, then stop.
            var buffer = [UInt8](repeating: 0, count: 4_096)
            var read = 0
            while read < 100_000 + index * 100_000 {
                let count = recv(socket, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                read += count
                usleep(UInt32(count))
            }
        }
        try Self.expectNoSpin(server)
    }

    /// After a second for what the test set off to settle, the server spends less than a fifth
    /// of a core over 3 s (a spin takes all of one: 300 ticks).
    static func expectNoSpin(_ server: TestServer, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let process = try #require(server.process)
        Thread.sleep(forTimeInterval: 1)
        let before = try #require(DescriptorShortageTests.cpuTicks(process.processIdentifier))
        Thread.sleep(forTimeInterval: 3)
        let ticks = try #require(DescriptorShortageTests.cpuTicks(process.processIdentifier)) - before
        #expect(ticks < 60, "\(ticks) CPU ticks (1/100 s) in 3 s", sourceLocation: sourceLocation)
    }

    /// The request path of an asset of `size` bytes (8 MB unless given) saved on `server`.
    static func bigAsset(_ server: TestServer, size: Int = 8_000_000, name: String = "big") throws -> String {
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let receipt = try AssetTests().upload(server, bytes)
        let saved = try server.post("records/modify", Body.modify([Body.operation("create", name: name, recordType: "Photo",
                                                                                  fields: ["photo": Body.field(receipt, "ASSET")])]))
        let url = try #require(saved.json.record(0)["fields"]?["photo"]?["value"]?["downloadURL"]?.stringValue, "\(saved.text)")
        return String(url.drop { $0 != "/" }.dropFirst(2).drop { $0 != "/" })
    }

    /// At the connection limit, clients that never read their answers held every connection
    /// (a response begun was "a request in progress", never closed to make room): `/healthz`
    /// was refused for the 30 s of lws' timeout, and a client reopening them could keep it so.
    /// Now responses read slower than 64 KiB/s for a second are closed to make room.
    @Test func responsesNobodyReadsDoNotHoldEveryConnection() throws {
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<170 {
            sockets.append(try #require(Self.unreadConnection(port: server.port, requests: 1), "connect: errno \(errno)"))
        }
        Thread.sleep(forTimeInterval: 1.5)
        var answered = 0
        for _ in 0..<6 {
            // Three tries, as a client would.
            for _ in 0..<3 {
                if (try? DescriptorShortageTests.fetch("/healthz", port: server.port))?.hasPrefix("HTTP/1.1 200") == true {
                    answered += 1
                    break
                }
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        #expect(answered >= 5, "\(answered) of 6 health checks answered")
    }

    static let openAPI = "GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    static let healthCheck = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

    /// A connection with a 1 KiB receive buffer and 1,460-byte segments that sends `requests`
    /// pipelined copies of `request` (by default `GET /openapi.json`: about 220 KB each, no
    /// credentials needed) and reads nothing.
    static func unreadConnection(port: Int, requests: Int, request: String = openAPI) -> Int32? {
        let made = DescriptorShortageTests.connection(port: port) { socket in
            var size: Int32 = 1_024
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            // Segments of an Ethernet's size: with loopback's 64 KiB ones, the kernel queues the
            // whole answer whatever the receive buffer, and nothing waits in the server.
            var segment: Int32 = 1_460
            setsockopt(socket, Int32(IPPROTO_TCP), TCP_MAXSEG, &segment, socklen_t(MemoryLayout<Int32>.size))
        }
        guard let socket = made else { return nil }
        let bytes = Array(String(repeating: request, count: requests).utf8)
        guard send(socket, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            close(socket)
            return nil
        }
        return socket
    }
}
