import Foundation
import Testing
@testable import TandemServer

/// The arithmetic behind the console's charts and request log filters (decisions C6, C7).
@Suite struct ConsoleMonitorTests {
    /// Per-bucket counts for `Metrics.buckets` (0.5 ms, 1 ms, 2.5 ms, 5 ms, 10 ms, …).
    static func buckets(_ counts: [Int: Int]) -> [Int] {
        (0..<Metrics.buckets.count).map { counts[$0] ?? 0 }
    }

    struct Case: CustomStringConvertible, Sendable {
        var q: Double
        var counts: [Int: Int]
        var total: Int
        /// Seconds.
        var expected: Double
        var description: String { "q=\(q) \(counts) of \(total)" }
    }

    static let cases: [Case] = [
        // No requests: nothing to plot.
        Case(q: 0.5, counts: [:], total: 0, expected: 0),
        // 100 requests all in (0.5 ms, 1 ms]: the median is halfway through the bucket.
        Case(q: 0.5, counts: [1: 100], total: 100, expected: 0.00075),
        // 50 in the first bucket, 50 in (1, 2.5] ms: the median ends the first bucket.
        Case(q: 0.5, counts: [0: 50, 2: 50], total: 100, expected: 0.0005),
        // p99 of 99 fast and 1 in (5, 10] ms: the rank 99 is the last fast request.
        Case(q: 0.99, counts: [0: 99, 4: 1], total: 100, expected: 0.0005),
        // p99 of 90 fast and 10 in (5, 10] ms: 9 of the 10 slow ones in, 90% through that bucket.
        Case(q: 0.99, counts: [0: 90, 4: 10], total: 100, expected: 0.005 + 0.005 * 0.9),
        // Slower than every bound: the last bound.
        Case(q: 0.99, counts: [0: 10], total: 100, expected: 5),
    ]

    @Test(arguments: cases)
    func quantilesAreReadFromTheHistogram(_ c: Case) {
        let value = ConsoleMonitor.quantile(c.q, buckets: Self.buckets(c.counts), count: c.total)
        #expect(abs(value - c.expected) < 1e-9, "\(value)")
    }

    @Test func pointsAreRatesBetweenSamples() {
        var old = Metrics.Totals()
        old.requests = 100
        old.serverErrors = 2
        old.buckets = Self.buckets([0: 100])
        var new = old
        new.requests = 120
        new.serverErrors = 6
        new.clientErrors = 10
        new.buckets = Self.buckets([0: 110, 3: 10])
        let point = ConsoleMonitor.point(from: .init(time: 1_000, totals: old, openConnections: 1), to: .init(time: 3_000, totals: new, openConnections: 4))
        #expect(point.requestsPerSecond == 10 && point.errorsPerSecond == 2 && point.clientErrorsPerSecond == 5 && point.openConnections == 4)
        // 10 fast and 10 in (2.5, 5] ms: the median ends the first bucket, p99 is 98% through the slow one.
        #expect(abs(point.p50 - 0.5) < 1e-9 && abs(point.p99 - (2.5 + 2.5 * 0.98)) < 1e-9, "\(point)")
    }

    @Test func chartScaleRoundsUpAndLinesEndAtTheRightEdge() {
        let chart = ConsoleChart(id: "c", title: "t", unit: "req/s", series: [.init(name: "a", label: "a", values: [0, 3.2, 7])])
        #expect(chart.scale == 10)
        let points = chart.points([0, 3.2, 7]).split(separator: " ")
        #expect(points.count == 3 && points.last == "300.0,43.4", "\(points)")
        #expect(ConsoleChart(id: "c", title: "t", unit: "", series: [.init(name: "a", label: "a", values: [0.2])]).scale == 1)
        #expect(ConsoleChart(id: "c", title: "t", unit: "", series: [.init(name: "a", label: "a", values: [120])]).scale == 200)
    }

    @Test func theRequestRingKeepsTheNewestAndFilters() {
        let ring = RecentRequests(capacity: 3)
        for (index, status) in [200, 404, 500, 201, 429].enumerated() {
            ring.append(time: 0, method: "GET", path: index % 2 == 0 ? "/database/1/x" : "/console/", status: status, microseconds: 1, uuid: "u\(index)")
        }
        #expect(ring.entries().map(\.uuid) == ["u4", "u3", "u2"])
        #expect(ring.entries(matching: .init(status: "4xx")).map(\.uuid) == ["u4"])
        #expect(ring.entries(matching: .init(status: "500")).map(\.uuid) == ["u2"])
        #expect(ring.entries(matching: .init(pathPrefix: "/database/")).map(\.uuid) == ["u4", "u2"])
        #expect(ring.entries(after: 4).map(\.uuid) == ["u4"])
        #expect(!RecentRequests.Filter(status: "abc").isValid && !RecentRequests.Filter(status: "4x").isValid && RecentRequests.Filter(status: "5xx").isValid)
    }
}
