import Foundation
import Testing
@testable import TandemServer
#if canImport(Glibc)
import Glibc
#endif

/// The request log's lines wait in memory for standard error (decisions E42).
@Suite struct RequestLogTests {
    /// Standard error that takes nothing (a full pipe, a terminal paused with Ctrl-S) while
    /// requests keep coming: what waits is bounded, the request lines left out are counted,
    /// and the count is written once standard error takes again. Before, every line waited,
    /// so a flood of requests grew the server's memory for as long as standard error was stuck.
    @Test func linesWaitingForAStuckStandardErrorAreBoundedAndCounted() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (reader, writer) = (ends[0], ends[1])
        defer { close(reader) }
        // Fill the pipe, so the log's first write blocks.
        _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) | O_NONBLOCK)
        let filler = [UInt8](repeating: UInt8(ascii: "x"), count: 4_096)
        var filled = 0
        while true {
            let written = write(writer, filler, filler.count)
            guard written > 0 else { break }
            filled += written
        }
        _ = fcntl(writer, F_SETFL, fcntl(writer, F_GETFL) & ~O_NONBLOCK)

        let log = RequestLog(enabled: true, descriptor: writer, capacity: 64 << 10)
        let recorded = 5_000
        for index in 0..<recorded {
            log.record(method: "GET", path: "/healthz", status: 200, microseconds: 10, bytes: 100, uuid: "request-\(index)")
        }

        // Now read: the blocked write goes through, then what waited and the count left out.
        var text = ""
        var chunk = [UInt8](repeating: 0, count: 65_536)
        var written = 0
        var leftOut = 0
        let deadline = Date().addingTimeInterval(10)
        _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        var skipped = 0
        while written + leftOut < recorded && Date() < deadline {
            let count = read(reader, &chunk, chunk.count)
            guard count > 0 else { usleep(10_000); continue }
            var bytes = chunk[..<count]
            if skipped < filled {
                let skip = min(filled - skipped, bytes.count)
                skipped += skip
                bytes = bytes.dropFirst(skip)
            }
            text += String(decoding: bytes, as: UTF8.self)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            written = lines.dropLast().filter { $0.contains(" GET /healthz 200 ") }.count
            leftOut = lines.dropLast().compactMap { line -> Int? in
                guard let range = line.range(of: " request lines were left out") else { return nil }
                return Int(line[..<range.lowerBound].split(separator: " ").last ?? "")
            }.reduce(0, +)
        }
        log.stop()
        close(writer)
        #expect(written + leftOut == recorded, "\(written) lines written, \(leftOut) counted as left out")
        // At most 64 KiB of lines wait, twice: one batch blocked in the write, one waiting.
        let writtenBytes = text.split(separator: "\n").filter { $0.contains(" GET /healthz 200 ") }.reduce(0) { $0 + $1.utf8.count + 1 }
        #expect(writtenBytes <= 2 * (64 << 10), "\(written) lines, \(writtenBytes) bytes written")
        #expect(leftOut > 0)
    }
}
