import Foundation
import TandemCore
import TandemStore

/// What the console's charts plot (decisions C7): samples of the `/metrics` counters
/// (`Metrics.totals`) and open connections, taken when the console asks and at most once a
/// second, the last 180 kept (minutes of history, in memory only). Between two samples:
/// requests per second, 4xx and 5xx per second, p50 and p99 latency read from the histogram's
/// bucket counts (linear within a bucket, as Prometheus's `histogram_quantile`), and the open
/// connections at the later sample.
final class ConsoleMonitor: Sendable {
    struct Sample: Sendable {
        var time: Int64
        var totals: Metrics.Totals
        var openConnections: Int
    }

    /// One plotted interval.
    struct Point: Sendable {
        var time: Int64
        var requestsPerSecond: Double
        var errorsPerSecond: Double
        var clientErrorsPerSecond: Double
        /// Milliseconds.
        var p50: Double
        var p99: Double
        var openConnections: Int
    }

    static let capacity = 180
    static let minimumSpacingMilliseconds: Int64 = 1000

    let metrics: Metrics
    let openConnections: @Sendable () -> Int
    private let samples = Locked<[Sample]>([])

    /// Takes a first sample at once (open connections 0: the server is not serving yet), so the
    /// first chart shows the time since start.
    init(metrics: Metrics, openConnections: @escaping @Sendable () -> Int) {
        self.metrics = metrics
        self.openConnections = openConnections
        samples.withLock { $0 = [Sample(time: Clock.milliseconds(), totals: metrics.totals(), openConnections: 0)] }
    }

    /// Samples now (unless the last sample is under a second old) and returns the plotted points, oldest first.
    func points(now: Int64 = Clock.milliseconds()) -> [Point] {
        let all = samples.withLock { list -> [Sample] in
            if let last = list.last, now - last.time < Self.minimumSpacingMilliseconds { return list }
            list.append(Sample(time: now, totals: metrics.totals(), openConnections: openConnections()))
            if list.count > Self.capacity { list.removeFirst(list.count - Self.capacity) }
            return list
        }
        guard all.count >= 2 else { return [] }
        return (1..<all.count).map { Self.point(from: all[$0 - 1], to: all[$0]) }
    }

    static func point(from old: Sample, to new: Sample) -> Point {
        let seconds = max(Double(new.time - old.time) / 1000, 0.001)
        let buckets = zip(new.totals.buckets, old.totals.buckets).map { $0 - $1 }
        let count = new.totals.requests - old.totals.requests
        return Point(time: new.time, requestsPerSecond: Double(count) / seconds,
                     errorsPerSecond: Double(new.totals.serverErrors - old.totals.serverErrors) / seconds,
                     clientErrorsPerSecond: Double(new.totals.clientErrors - old.totals.clientErrors) / seconds,
                     p50: quantile(0.5, buckets: buckets, count: count) * 1000, p99: quantile(0.99, buckets: buckets, count: count) * 1000,
                     openConnections: new.openConnections)
    }

    /// The `q` quantile in seconds of `count` requests spread over `buckets` (per-bucket counts
    /// for `Metrics.buckets`; requests beyond the last bound are the remainder): linear within the
    /// bucket holding it; the last bound when it lies beyond; 0 with no requests.
    static func quantile(_ q: Double, buckets: [Int], count: Int) -> Double {
        guard count > 0 else { return 0 }
        let rank = q * Double(count)
        var cumulative = 0
        for (index, bound) in Metrics.buckets.enumerated() {
            let inBucket = buckets[index]
            if Double(cumulative + inBucket) >= rank && inBucket > 0 {
                let lower = index == 0 ? 0 : Metrics.buckets[index - 1]
                return lower + (bound - lower) * (rank - Double(cumulative)) / Double(inBucket)
            }
            cumulative += inBucket
        }
        return Metrics.buckets.last ?? 0
    }
}
