import Foundation
import Testing
import TandemHTTP

extension EndToEndTests {
    /// Bodies sent from a file (`HTTPResponse.file`), read a chunk at a time off the service
    /// thread (decisions E44).
    @Suite struct FileBody {
        @Test(arguments: [(0, 0), (1, 0), (262_144, 0), (1_000_003, 0), (1_000_003, 262_143), (3_000_000, 999_999)])
        func aFileBodyArrivesWhole(size: Int, from: Int) throws {
            try withServerThenStop(TestResponder()) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 10, receiveBuffer: 4_096)
                for _ in 0..<2 {
                    try client.send("GET /file?bytes=\(size)&from=\(from) HTTP/1.1\r\nHost: x\r\n\r\n")
                    let response = try client.readResponse()
                    #expect(response.status == 200)
                    #expect(response.headers["content-length"] == "\(size - from)")
                    #expect(response.body == Array(TestResponder.pattern(count: size)[from...]))
                }
            }
        }

        @Test func headGivesTheLengthAndNoBody() throws {
            try withServerThenStop(TestResponder()) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 5)
                try client.send("HEAD /file?bytes=700000 HTTP/1.1\r\nHost: x\r\n\r\nGET /echo?after HTTP/1.1\r\nHost: x\r\n\r\n")
                let head = try client.readResponse(expectBody: false)
                #expect(head.status == 200 && head.headers["content-length"] == "700000")
                // The next answer follows at once: no body bytes came between.
                #expect(try client.readResponse().headers["x-query"] == "after")
            }
        }

        /// A file shorter than the range its response claims: the content-length is out, so
        /// the connection closes where the file ends, and the server goes on serving.
        @Test func aFileShorterThanItsRangeEndsTheConnection() throws {
            try withServerThenStop(TestResponder()) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 5)
                try client.send("GET /file?bytes=600000&claim=900000 HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(throws: RawHTTPClient.Failure.self) { try client.readResponse() }
            }
        }
    }
}

extension EndToEndTests {
    /// The wait for a kept connection's next request (`keepAliveTimeout`) starts when the
    /// client has the response, not when the server handed its last byte to the kernel
    /// (review 62, decisions E45): a client reading a long tail slowly found its connection
    /// closed when it asked again.
    @Suite struct KeepAliveAfterALongTail {
        @Test func aClientStillReadingWhenTheKeepAliveWaitWouldEndKeepsItsConnection() throws {
            try withServerThenStop(TestResponder(), configure: { $0.keepAliveTimeout = 1 }) { server in
                let client = try RawHTTPClient(port: server.port, timeout: 10, receiveBuffer: 4_096)
                try client.send("GET /big?bytes=2000000 HTTP/1.1\r\nHost: x\r\n\r\n")
                // About 2.5 s to read it all, in 50 KB steps.
                var read: [UInt8] = []
                let head = try client.readResponse(expectBody: false)
                #expect(head.status == 200)
                while read.count < 2_000_000 {
                    read += try client.read(count: min(50_000, 2_000_000 - read.count))
                    usleep(60_000)
                }
                #expect(read == TestResponder.pattern(count: 2_000_000))
                try client.send("GET /echo?next HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(try client.readResponse().headers["x-query"] == "next")
            }
        }
    }
}
