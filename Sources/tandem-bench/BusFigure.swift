import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemServer
import TandemStore
import TandemStorePostgres
import TandemTestSupport

/// Issue 20's cost of the bus (decisions N12): two `tandem serve` nodes on one PostgreSQL
/// database with `--bus` to a nats-server on loopback; one member has a stream WebSocket on
/// each node; the other member posts messages on node A, one at a time. Reported: how much
/// later a message reaches the member's stream on node B than on node A (the bus's delivery
/// latency: encode, NATS round trip, decode, hand-off), p50 and p99 against issue 20's
/// "p99 < 10 ms on loopback", and node B's server CPU per message heard from the bus.
enum BusFigure {
    static func run(options: BenchOptions, report: Report) throws {
        report.section("bus: a conversation message's delivery on a second node (NATS on loopback)")
        let nats = try NATSServer()
        defer { try? nats.stop() }
        let store = try BenchPostgres.database()
        let dataA = try BenchPaths.temporaryDirectory("bus-a"), dataB = try BenchPaths.temporaryDirectory("bus-b")
        defer { BenchPaths.remove(dataA); BenchPaths.remove(dataB) }
        let sender = try BenchAccount.prepare(postgresURL: store, directory: dataA)
        let (member, memberToken) = try addMember(postgresURL: store, directory: dataA)

        let a = ServerProcess(dataDirectory: dataA, postgresURL: store)
        a.extraArguments = ["--bus", nats.url]
        try a.start()
        defer { a.stop() }
        try FileManager.default.copyItem(atPath: dataA + "/secret.key", toPath: dataB + "/secret.key")
        let b = ServerProcess(dataDirectory: dataB, postgresURL: store)
        b.extraArguments = ["--bus", nats.url]
        try b.start()
        defer { b.stop() }

        let arrivals = Arrivals()
        let streams = [(a.port, 0), (b.port, 1)].map { port, node in
            Stream.open(port: port, token: memberToken) { text in arrivals.heard(text, node: node) }
        }
        defer { streams.forEach { $0.close() } }
        guard streams.allSatisfy({ $0.isOpen }) else { throw BenchError("a member's stream WebSocket did not connect") }

        let base = a.url + "/tandem/1/\(BenchAccount.container)/development/conversations"
        let created = try post(base + "/create", #"{"members":["\#(member)"]}"#, token: sender.token)
        guard let conversation = (try? JSONParser.parse(created))?["conversationID"]?.stringValue else {
            throw BenchError("conversations/create: \(created.prefix(300))")
        }
        let count = options.size.pick(full: 400, quick: 100, smoke: 10)
        let cpuBefore = b.cpuSeconds()
        var extra: [Double] = []
        for n in 0..<count {
            let marker = "bus-\(n)-"
            arrivals.expect(marker)
            _ = try post(base + "/messages/send", #"{"conversation":"\#(conversation)","text":"\#(marker)"}"#, token: sender.token)
            guard let (atA, atB) = arrivals.wait(for: marker, seconds: 10) else {
                throw BenchError("message \(n) did not reach both nodes within 10 s")
            }
            extra.append(Double(Int64(atB) - Int64(atA)) / 1e9)
        }
        let cpuPerMessage = (b.cpuSeconds() - cpuBefore) / Double(count)
        extra.sort()
        let p50 = extra[extra.count / 2], p99 = extra[min(extra.count - 1, extra.count * 99 / 100)]
        report.say("  \(count) messages, one at a time: arrival on node B after node A p50 \(Format.latency(p50)), p99 \(Format.latency(p99)); "
                   + String(format: "node B server CPU %.2f ms per message heard from the bus (decode, stream send)", cpuPerMessage * 1000))
        report.add("bus: notification on a second node, p99 (after the first node)", value: Format.latency(p99), target: "<10 ms",
                   verdict: Report.Verdict(passes: p99 < 0.010))
        report.add("bus: receiving node's CPU per event", value: String(format: "%.2f ms", cpuPerMessage * 1000), verdict: .info)
    }

    /// The second member, with a token (through the store, before the servers open it).
    static func addMember(postgresURL url: String, directory: String) throws -> (String, String) {
        let store = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 1))
        defer { store.close() }
        let user = try Admin.addUser(email: "member@example.com", name: "Member", store: store)
        return (user.recordName, try Admin.createUserToken(for: user.recordName, store: store))
    }

    static func post(_ url: String, _ body: String, token: String) throws -> String {
        try Shell.run("/usr/bin/curl", ["-s", "-H", "Authorization: Bearer \(token)", "-H", "Content-Type: application/json",
                                        "-d", body, url]).stdout
    }

    /// When each marker's message reached each node's stream (uptime nanoseconds).
    final class Arrivals: Sendable {
        private let seen = Mutex<[String: [Int: UInt64]]>([:])
        private let expected = Mutex<String?>(nil)

        func expect(_ marker: String) { expected.withLock { $0 = marker } }

        func heard(_ text: String, node: Int) {
            let now = DispatchTime.now().uptimeNanoseconds
            guard let marker = expected.withLock({ $0 }), text.contains(marker) else { return }
            seen.withLock { all in if all[marker]?[node] == nil { all[marker, default: [:]][node] = now } }
        }

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
