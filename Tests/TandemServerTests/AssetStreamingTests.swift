import Foundation
import Testing
import TandemCore
import TandemTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Downloads of stored files are read from disk as the client takes them (decisions E44): a
/// download holds one 256 KiB chunk in memory, not its file (review 62: 40 clients that did not
/// read a 50 MiB asset held 2 GiB; a one-byte range read the whole file).
@Suite struct AssetStreamingTests {
    /// Bytes without a short period, so a chunk out of place shows.
    static let bytes = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) })

    @Test func aDownloadOfManyChunksArrivesWholeAndAnyRangeIsThoseBytes() throws {
        let server = try Shared.server
        let (_, _, url) = try AssetDownloadURLTests().photo(server, Self.bytes)
        let whole = try server.request("GET", url, token: .some(nil))
        #expect(whole.status == 200 && whole.body == Self.bytes, "\(whole.status) \(whole.body.count) bytes")
        for (header, range) in [("bytes=262000-800000", 262_000..<800_001), ("bytes=2999999-", 2_999_999..<3_000_000),
                                ("bytes=-524288", 2_475_712..<3_000_000), ("bytes=0-0", 0..<1)] {
            let part = try server.request("GET", url, token: .some(nil), headers: ["Range": header])
            #expect(part.status == 206, "\(header): \(part.status)")
            #expect(part.body == Self.bytes.subdata(in: range), "\(header): \(part.body.count) bytes")
            #expect(part.headers["content-range"] == "bytes \(range.lowerBound)-\(range.upperBound - 1)/3000000")
        }
    }

    /// A client that holds the bytes already (`If-None-Match` with the ETag) gets 304 with the
    /// validators and no body; it got the whole asset again before.
    @Test(arguments: [("ETAG", 304), ("W/ETAG", 304), ("\"other\", ETAG", 304), ("*", 304), ("\"other\"", 200)])
    func aClientHoldingTheBytesGets304(header: String, status: Int) throws {
        let server = try Shared.server
        let (_, _, url) = try AssetDownloadURLTests().photo(server, Data(Self.bytes.prefix(1_000)))
        let etag = try #require(try server.request("HEAD", url, token: .some(nil)).headers["etag"])
        let response = try server.request("GET", url, token: .some(nil), headers: ["If-None-Match": header.replacingOccurrences(of: "ETAG", with: etag)])
        #expect(response.status == status)
        if status == 304 {
            #expect(response.body.isEmpty && response.headers["etag"] == etag && response.headers["cache-control"]?.isEmpty == false)
        } else {
            #expect(response.body == Self.bytes.prefix(1_000))
        }
    }

    /// HEAD tells the size (and the rest of the headers) without the bytes; it was 405.
    @Test func headTellsTheSizeWithoutTheBytes() throws {
        let server = try Shared.server
        let (_, _, url) = try AssetDownloadURLTests().photo(server, Self.bytes)
        let head = try server.request("HEAD", url, token: .some(nil))
        #expect(head.status == 200 && head.body.isEmpty, "\(head.status)")
        #expect(head.headers["content-length"] == "3000000")
        #expect(head.headers["etag"]?.isEmpty == false && head.headers["accept-ranges"] == "bytes")
        #expect(try server.request("PUT", url, token: .some(nil)).status == 405)
    }

    /// Downloads nobody reads hold no descriptor for their file (review 63: held open, 115 of
    /// them used every descriptor under a limit of 256, and downloads of assets that exist
    /// answered 404, uploads 500).
    @Test func downloadsNobodyReadsHoldNoDescriptorAndOthersAreServed() throws {
        let server = try TestServer(launcher: { _ in ["/usr/bin/prlimit", "--nofile=256:256"] })
        let process = try #require(server.process)
        let path = try UnreadResponseTests.bigAsset(server)
        let small = try UnreadResponseTests.bigAsset(server, size: 1_000, name: "small")
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        for _ in 0..<120 {
            sockets.append(try #require(UnreadResponseTests.unreadConnection(port: server.port, requests: 1, request: request)))
        }
        Thread.sleep(forTimeInterval: 1)
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0
        #expect(open < 240, "\(open) descriptors open")
        let answer = try server.request("GET", "http://127.0.0.1:\(server.port)\(small)", token: .some(nil))
        #expect(answer.status == 200 && answer.body.count == 1_000, "\(answer.status) \(answer.text.prefix(300))")
    }

    /// Clients that ask for an 8 MB asset and read nothing: resident memory grew by the
    /// file for each (25 × 8 MB) before; now by a chunk or two each.
    @Test func downloadsNobodyReadsHoldAChunkEachNotTheirFile() throws {
        let server = try TestServer()
        let process = try #require(server.process)
        let path = try UnreadResponseTests.bigAsset(server)
        _ = try DescriptorShortageTests.fetch("/healthz", port: server.port)
        let before = try #require(DescriptorShortageTests.residentKiB(process.processIdentifier))
        var sockets: [Int32] = []
        defer { sockets.forEach { close($0) } }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        for _ in 0..<25 {
            sockets.append(try #require(UnreadResponseTests.unreadConnection(port: server.port, requests: 1, request: request)))
        }
        Thread.sleep(forTimeInterval: 2)
        let held = try #require(DescriptorShortageTests.residentKiB(process.processIdentifier)) - before
        #expect(held < 64 << 10, "\(held >> 10) MiB more resident with 25 unread 8 MB downloads")
    }
}
