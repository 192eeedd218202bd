import TandemCore
import TandemHTTP

/// Request counts and latency histograms per endpoint, in Prometheus text format (`/metrics`).
public final class Metrics: Sendable {
    /// Histogram bucket upper bounds, seconds.
    static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    struct Endpoint {
        var countsByStatus: [Int: Int] = [:]
        var bucketCounts = [Int](repeating: 0, count: Metrics.buckets.count)
        var sum = 0.0
        var count = 0
    }

    /// Each thread records into its own shard (a lock only it and `render` take), so requests
    /// never contend for one shared lock.
    final class Shard: Sendable {
        let endpoints = Locked<[String: Endpoint]>([:])
    }

    private let shards = PerThread { Shard() }

    public init() {}

    func observe(endpoint: String, status: Int, seconds: Double) {
        let bucket = Self.buckets.firstIndex { seconds <= $0 }
        shards.current.endpoints.withLock { all in
            all[endpoint, default: Endpoint()].record(status: status, seconds: seconds, bucket: bucket)
        }
    }

    /// Every endpoint's counts added up: what the console's charts are drawn from (decisions C7).
    struct Totals: Sendable, Hashable {
        var requests = 0
        /// Answers with a 5xx status.
        var serverErrors = 0
        /// Answers with a 4xx status.
        var clientErrors = 0
        /// Requests per latency bucket (not cumulative), in `Metrics.buckets` order; slower ones
        /// are in `requests` only.
        var buckets = [Int](repeating: 0, count: Metrics.buckets.count)
    }

    func totals() -> Totals {
        var totals = Totals()
        for shard in shards.everyThread {
            for endpoint in shard.endpoints.withLock({ Array($0.values) }) {
                totals.requests += endpoint.count
                for (status, count) in endpoint.countsByStatus {
                    if status >= 500 { totals.serverErrors += count } else if status >= 400 { totals.clientErrors += count }
                }
                for index in totals.buckets.indices { totals.buckets[index] += endpoint.bucketCounts[index] }
            }
        }
        return totals
    }

    /// One histogram's series in Prometheus text: cumulative `_bucket` lines over `buckets`
    /// (`bucketCounts` holds each bucket's own count, in order), the `+Inf` bucket, `_sum` and
    /// `_count`; `labels` (e.g. `endpoint="records/modify"`) go inside each series' braces.
    static func histogram(_ name: String, labels: String = "", bucketCounts: [Int], sum: Double, count: Int) -> String {
        let before = labels.isEmpty ? "" : labels + ","
        let braces = labels.isEmpty ? "" : "{\(labels)}"
        var out = ""
        var cumulative = 0
        for (index, bound) in buckets.enumerated() {
            cumulative += bucketCounts[index]
            out += "\(name)_bucket{\(before)le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "\(name)_bucket{\(before)le=\"+Inf\"} \(count)\n"
        out += "\(name)_sum\(braces) \(sum)\n"
        out += "\(name)_count\(braces) \(count)\n"
        return out
    }

    func render(openConnections: Int, droppedMessages: Int = 0, bodies: HTTPBodyFigures = HTTPBodyFigures()) -> String {
        var snapshot: [String: Endpoint] = [:]
        for shard in shards.everyThread {
            for (name, endpoint) in shard.endpoints.withLock({ $0 }) {
                snapshot[name, default: Endpoint()].merge(endpoint)
            }
        }
        var out = "# HELP tandem_websocket_dropped_messages_total Droppable WebSocket messages (unreliable session traffic) dropped because a send queue was full.\n# TYPE tandem_websocket_dropped_messages_total counter\ntandem_websocket_dropped_messages_total \(droppedMessages)\n"
        out += "# HELP tandem_http_requests_total HTTP requests by endpoint and status.\n# TYPE tandem_http_requests_total counter\n"
        for name in snapshot.keys.sorted() {
            for (status, count) in snapshot[name]!.countsByStatus.sorted(by: { $0.key < $1.key }) {
                out += "tandem_http_requests_total{endpoint=\"\(name)\",status=\"\(status)\"} \(count)\n"
            }
        }
        out += "# HELP tandem_http_request_duration_seconds Time from routing to response, by endpoint.\n# TYPE tandem_http_request_duration_seconds histogram\n"
        for name in snapshot.keys.sorted() {
            let e = snapshot[name]!
            out += Self.histogram("tandem_http_request_duration_seconds", labels: "endpoint=\"\(name)\"", bucketCounts: e.bucketCounts,
                                  sum: e.sum, count: e.count)
        }
        out += "# HELP tandem_http_open_connections Open HTTP connections.\n# TYPE tandem_http_open_connections gauge\n"
        out += "tandem_http_open_connections \(openConnections)\n"
        out += "# HELP tandem_http_body_bytes_buffered Request body bytes held in memory (in-memory bodies by content-length, spooled bytes not yet on disk).\n# TYPE tandem_http_body_bytes_buffered gauge\n"
        out += "tandem_http_body_bytes_buffered \(bodies.bufferedBytes)\n"
        out += "# HELP tandem_http_body_bytes_buffered_peak The most request body bytes held in memory since start.\n# TYPE tandem_http_body_bytes_buffered_peak gauge\n"
        out += "tandem_http_body_bytes_buffered_peak \(bodies.peakBufferedBytes)\n"
        out += "# HELP tandem_http_bodies_spooled Large request bodies (uploads) being admitted, written to disk or answered.\n# TYPE tandem_http_bodies_spooled gauge\n"
        out += "tandem_http_bodies_spooled \(bodies.spooledBodies)\n"
        out += "# HELP tandem_http_admissions_total Request heads admitted before their body is read, by where it was decided: from memory on the service thread (a sender checked moments ago), or by a worker (which may also refuse).\n# TYPE tandem_http_admissions_total counter\n"
        out += "tandem_http_admissions_total{decided=\"memory\"} \(bodies.admissionsFromMemory)\n"
        out += "tandem_http_admissions_total{decided=\"worker\"} \(bodies.admissionsByWorkers)\n"
        return out
    }
}

extension Metrics.Endpoint {
    mutating func merge(_ other: Metrics.Endpoint) {
        for (status, count) in other.countsByStatus { countsByStatus[status, default: 0] += count }
        for index in bucketCounts.indices { bucketCounts[index] += other.bucketCounts[index] }
        sum += other.sum
        count += other.count
    }

    mutating func record(status: Int, seconds: Double, bucket: Int?) {
        countsByStatus[status, default: 0] += 1
        if let bucket { bucketCounts[bucket] += 1 }
        sum += seconds
        count += 1
    }
}
