import Foundation
import TandemCore

/// How late other nodes' events reach this node (decisions N41): for each event heard from the
/// bus, the time it was handed to this node's subscribers minus the time its node published it
/// (`BusEvent.sentAt`), as the Prometheus histogram `tandem_bus_lag_seconds` of `/metrics`.
///
/// It covers the publisher's outbox, NATS, this node's inbox queue and the decoding: what a
/// client on this node waits beyond a client on the publishing node. Both times are wall clocks
/// of two machines: skew between them moves the figure (a negative difference counts as 0).
/// Buckets are the request histogram's (`Metrics.buckets`, 0.5 ms to 5 s).
final class BusLag: Sendable {
    private struct State {
        var buckets = [Int](repeating: 0, count: Metrics.buckets.count)
        var sum = 0.0
        var count = 0
    }

    private let state = Locked(State())

    /// Records one event published at `sentAt` (seconds since 1970) and received `now`.
    func observe(sentAt: Double, now: Double = Date().timeIntervalSince1970) {
        let seconds = max(0, now - sentAt)
        let bucket = Metrics.buckets.firstIndex { seconds <= $0 }
        state.withLock { state in
            if let bucket { state.buckets[bucket] += 1 }
            state.sum += seconds
            state.count += 1
        }
    }

    /// The histogram in Prometheus text format.
    var metricsText: String {
        let snapshot = state.withLock { $0 }
        let name = "tandem_bus_lag_seconds"
        return "# HELP \(name) Events from other nodes: time handed to this node's subscribers minus time published (wall clocks).\n"
            + "# TYPE \(name) histogram\n"
            + Metrics.histogram(name, bucketCounts: snapshot.buckets, sum: snapshot.sum, count: snapshot.count)
    }
}
