import Foundation
import TandemCore
import TandemHTTP
import TandemServer
import TandemStore
import TandemStorePostgres
import TandemTestSupport

/// Issue 20's cost of the bus (decisions N12, N42), on three `tandem serve` nodes on one
/// PostgreSQL database with `--bus` to a nats-server on loopback, beside a fourth node without
/// the bus (`BusCluster`):
///
/// - a notification: the bench user, subscribed to `Note` creations, has a stream WebSocket on
///   node A and one on node B; records are saved on A one at a time. Reported: how much later
///   the push reaches B's stream than A's (what the bus adds: encode, outbox, NATS, inbox,
///   decode, hand-off), p50/p99 against issue 20's "p99 < 10 ms on loopback", and the save's
///   request to the push on B;
/// - a reliable session message: members on A (the sender, and a receiver) and on B; the same
///   difference (`BusSessionFigure`);
/// - one session of 32 flat out, all on the node without the bus, then spread over the three
///   nodes: deliveries/s and the ratio (target ≥ 50%, `BusSessionFigure`);
/// - server CPU per event: the nodes' /proc utime+stime (and nats-server's) over the
///   notification run, divided by saves, beside the same run on the node without the bus with
///   both streams on it (the same deliveries, no bus).
enum BusFigure {
    static func run(options: BenchOptions, report: Report) throws {
        report.section("bus: cross-node delivery, a session over three nodes, CPU per event (NATS on loopback)")
        let cluster = try BusCluster(nodes: 3)
        defer { cluster.stop() }
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let subscription = #"{"operations":[{"operationType":"create","subscription":{"subscriptionID":"bench-bus","subscriptionType":"query","query":{"recordType":"Note"},"firesOn":["create"]}}]}"#
        let created = try BenchHTTP().post(a.url + BenchAccount.databasePath + "/subscriptions/modify", token: cluster.account.token,
                                           body: Array(subscription.utf8))
        guard created.status == 200 else { throw BenchError("subscriptions/modify: \(String(decoding: created.body.prefix(300), as: UTF8.self))") }

        let count = options.size.pick(full: 400, quick: 100, smoke: 10)
        let bus = try notifications(count: count, writer: a, streams: (a, b), cpu: { cluster.cpuSeconds([a, b], nats: true) },
                                    prefix: "bus", account: cluster.account)
        report.say("  notification, \(count) saves on node A one at a time: push on node B after the push on node A "
                   + "p50 \(Format.latency(bus.extra.p50)), p99 \(Format.latency(bus.extra.p99)); save request → push on B "
                   + "p50 \(Format.latency(bus.total.p50)), p99 \(Format.latency(bus.total.p99))")
        let one = try notifications(count: count, writer: cluster.single, streams: (cluster.single, cluster.single),
                                    cpu: { cluster.cpuSeconds([cluster.single], nats: false) }, prefix: "one", account: cluster.account)
        report.say("  the same on the node without the bus, both streams on it: save request → second push "
                   + "p50 \(Format.latency(one.total.p50)), p99 \(Format.latency(one.total.p99))")
        // CPU time comes in 10 ms ticks from /proc: in a short run the difference may round to
        // nothing or below (it printed "adds -0.00 ms").
        let added = (bus.cpuPerEvent - one.cpuPerEvent) * 1000
        report.say(String(format: "  server CPU per save (write, match, two pushes): %.2f ms with the bus (nodes A and B and nats-server), "
                          + "%.2f ms on one node without it: ", bus.cpuPerEvent * 1000, one.cpuPerEvent * 1000)
                   + (added >= 0.005 ? String(format: "the bus adds %.2f ms per event", added) : "no difference this run can measure"))
        report.add("bus: notification, push on B after push on A, p50/p99",
                   value: "\(Format.latency(bus.extra.p50))/\(Format.latency(bus.extra.p99))", target: "p99 < 10 ms",
                   verdict: Report.Verdict(passes: bus.extra.p99 < 0.010))
        report.add("bus: notification, save on A → push on B, p50/p99", value: "\(Format.latency(bus.total.p50))/\(Format.latency(bus.total.p99))",
                   ceiling: "\(Format.latency(one.total.p50))/\(Format.latency(one.total.p99))", ratio: ratio(bus.total.p99, one.total.p99),
                   verdict: .info)
        report.add("bus: server CPU per event (with bus / one node without)", value: String(format: "%.2f ms", bus.cpuPerEvent * 1000),
                   ceiling: String(format: "%.2f ms", one.cpuPerEvent * 1000), ratio: ratio(bus.cpuPerEvent, one.cpuPerEvent), verdict: .info)
        try BusSessionFigure.run(cluster: cluster, options: options, report: report)
    }

    /// `value / baseline` as `1.3×`.
    static func ratio(_ value: Double, _ baseline: Double) -> String {
        baseline > 0 ? String(format: "%.1f×", value / baseline) : "—"
    }

    /// p50 and p99 of samples, seconds.
    struct Percentiles {
        var p50: Double, p99: Double
        init(_ samples: [Double]) {
            let sorted = samples.sorted()
            p50 = sorted.isEmpty ? .nan : sorted[sorted.count / 2]
            p99 = sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
    }

    /// One notification run: the second stream's push after the first's, the save request to
    /// the second push, and server CPU per save.
    struct NotificationRun {
        var extra: Percentiles
        var total: Percentiles
        var cpuPerEvent: Double
    }

    /// Saves `count` records on `writer`, one at a time, each once both streams heard its push.
    static func notifications(count: Int, writer: ServerProcess, streams ports: (ServerProcess, ServerProcess),
                              cpu: () -> Double, prefix: String, account: BenchAccount) throws -> NotificationRun {
        let arrivals = Arrivals()
        // Greeted: each stream is registered with its node's hubs before the first save.
        arrivals.expect(#""type":"hello""#)
        let streams = [(ports.0.port, 0), (ports.1.port, 1)].map { port, node in
            Stream.open(port: port, token: account.token) { text in arrivals.heard(text, node: node) }
        }
        defer { streams.forEach { $0.close() } }
        guard streams.allSatisfy({ $0.isOpen }), arrivals.wait(for: #""type":"hello""#, seconds: 10) != nil else {
            throw BenchError("a stream WebSocket did not connect")
        }
        let http = BenchHTTP()
        let url = writer.url + BenchAccount.databasePath + "/records/modify"
        var extra: [Double] = [], total: [Double] = []
        let cpuBefore = cpu()
        for n in 0..<count {
            let marker = "\(prefix)-\(n)-"
            arrivals.expect(marker)
            let body = #"{"operations":[{"operationType":"create","record":{"recordType":"Note","recordName":"\#(marker)","fields":{"title":{"value":"x"}}}}]}"#
            let sent = DispatchTime.now().uptimeNanoseconds
            let response = try http.post(url, token: account.token, body: Array(body.utf8))
            guard response.status == 200 else { throw BenchError("records/modify: \(String(decoding: response.body.prefix(300), as: UTF8.self))") }
            guard let (first, second) = arrivals.wait(for: marker, seconds: 10) else {
                throw BenchError("the push of save \(n) did not reach both streams within 10 s (heard on: \(arrivals.nodes(for: marker)))")
            }
            extra.append(Double(Int64(second) - Int64(first)) / 1e9)
            total.append(Double(second - sent) / 1e9)
        }
        return NotificationRun(extra: Percentiles(extra), total: Percentiles(total), cpuPerEvent: (cpu() - cpuBefore) / Double(count))
    }

    /// Adds the conversations' second member, `email` (through the store, before the servers open it).
    static func addMember(_ email: String, postgresURL url: String, directory: String) throws {
        let store = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 1))
        defer { store.close() }
        _ = try Admin.addUser(email: email, name: "Member", store: store)
    }

    /// When each marker's message reached each node's stream (uptime nanoseconds).
    final class Arrivals: Sendable {
        private let seen = Locked<[String: [Int: UInt64]]>([:])
        private let expected = Locked<String?>(nil)

        func expect(_ marker: String) { expected.withLock { $0 = marker } }

        func heard(_ text: String, node: Int) {
            let now = DispatchTime.now().uptimeNanoseconds
            guard let marker = expected.withLock({ $0 }), text.contains(marker) else { return }
            seen.withLock { all in if all[marker]?[node] == nil { all[marker, default: [:]][node] = now } }
        }

        /// The nodes whose stream heard `marker`'s message so far.
        func nodes(for marker: String) -> [Int] { seen.withLock { ($0[marker] ?? [:]).keys.sorted() } }

        func wait(for marker: String, seconds: Double) -> (UInt64, UInt64)? {
            let deadline = Date(timeIntervalSinceNow: seconds)
            while Date() < deadline {
                if let both = seen.withLock({ $0[marker] }), let a = both[0], let b = both[1] { return (a, b) }
                usleep(200)
            }
            return nil
        }
    }

    /// A stream WebSocket whose text messages go to `heard` as they arrive.
    final class Stream: Sendable {
        private let box = ClientBox()
        var isOpen: Bool { box.get() != nil }

        static func open(port: Int, token: String, heard: @escaping @Sendable (String) -> Void) -> Stream {
            let stream = Stream()
            let ready = DispatchSemaphore(value: 0)
            let box = stream.box
            Task.detached {
                let url = URL(string: "ws://127.0.0.1:\(port)/stream/1/\(BenchAccount.container)/development")!
                guard let client = try? await WebSocketClient.connect(to: url, headers: [("Authorization", "Bearer \(token)")]) else {
                    ready.signal()
                    return
                }
                box.set(client)
                ready.signal()
                for await event in client.events {
                    if case .message(.text(let text)) = event { heard(text) }
                }
            }
            ready.wait()
            return stream
        }

        func close() { box.get()?.close() }
    }
}
