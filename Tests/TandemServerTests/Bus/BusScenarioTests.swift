import Foundation
import Synchronization
import Testing
import TandemCore
import TandemTestSupport

/// Two `tandem serve` nodes on one PostgreSQL database with `--bus nats://…` (issue 20 item 2;
/// decisions N1–N12): what a write on node A publishes reaches clients connected to node B, and
/// the bus survives nats-server restarting. Real peers: a throwaway PostgreSQL cluster and
/// nats-server on loopback.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct BusScenarioTests {
    @Test func aRecordSavedOnNodeAIsPushedToALongPollOnNodeB() throws {
        let cluster = try NodeCluster(nodes: 2)
        let ada = try cluster.person("ada")
        _ = try cluster.b.subscribe(["subscriptionID": "notes", "subscriptionType": "query", "query": ["recordType": "Note"],
                                     "firesOn": ["create", "update", "delete"]], as: ada)
        let mailbox = try cluster.b.webcourier(as: ada)
        try cluster.save("first", on: cluster.a, as: ada)
        let heard = try cluster.b.notifications(at: mailbox, count: 1, seconds: 20)
        #expect(heard.first?["recordName"] == "first", "\(heard)")
        #expect(heard.first?["queryNotificationReason"] == "recordCreated", "\(heard)")
        // Matched once, on A: B delivered it, A's bus counters show it sent, B's that it received.
        #expect(NodeCluster.counter("tandem_bus_published_total", on: cluster.a) >= 1)
        #expect(NodeCluster.counter("tandem_bus_received_total", on: cluster.b) >= 1)
    }

    @Test func aWebhookIsPostedOncePerClusterByTheNodeThatMatched() throws {
        let cluster = try NodeCluster(nodes: 2, extraArguments: ["--webhook-allow", "127.0.0.0/8"])
        let ada = try cluster.person("ada")
        let receiver = try WebhookReceiver()
        _ = try cluster.b.subscribe(["subscriptionID": "hook", "subscriptionType": "database", "webhookURL": .string(receiver.url)], as: ada)
        let mailbox = try cluster.b.webcourier(as: ada)
        try cluster.save("hooked", on: cluster.a, as: ada)
        // Node B heard the notification (its long poll has it), so B had its chance to post it too.
        #expect(try cluster.b.notifications(at: mailbox, count: 1, seconds: 20).count == 1)
        #expect(receiver.waitFor(1, seconds: 20).count == 1)
        Thread.sleep(forTimeInterval: 1)
        #expect(receiver.deliveries.withLock { $0.count } == 1, "one POST for the cluster, not one per node")
    }

    @Test func aConversationMessagePostedOnNodeAReachesAMemberOnNodeB() async throws {
        let cluster = try NodeCluster(nodes: 2)
        let ada = try cluster.person("ada")
        let bob = try cluster.person("bob")
        let remote = try await StreamProbe.connect(cluster.b, as: bob)
        // Bob on node A too: the same message's arrival there is the single-node baseline.
        let local = try await StreamProbe.connect(cluster.a, as: bob)
        let id = try cluster.a.conversation(ada, with: [bob], title: "Trip")
        #expect(await remote.wait(seconds: 20) { $0.has("conversation.created") }, "\(remote.envelopes.withLock { $0 })")

        // What the bus adds to a message's delivery: arrival on B minus arrival on A, on loopback
        // (printed, not asserted: DESIGN.md §7).
        var extra: [Double] = []
        for n in 0..<40 {
            let text = "hello \(n)"
            _ = try cluster.a.say(text, in: id, as: ada)
            func seen(_ probe: StreamProbe) -> Bool {
                probe.envelopes.withLock { $0.contains { $0["type"] == "conversation.event" && JSONWriter.string($0).contains("\"\(text)\"") } }
            }
            async let atA = Self.arrival(local, seen)
            async let atB = Self.arrival(remote, seen)
            let (a, b) = await (atA, atB)
            #expect(b != nil, "message \(n) did not reach node B")
            guard let a, let b else { return }
            let difference = b - a
            extra.append(Double(difference.components.seconds) * 1000 + Double(difference.components.attoseconds) / 1e15)
        }
        extra.sort()
        print("bus: conversation message, arrival on node B after node A: p50 \(String(format: "%.2f", extra[extra.count / 2])) ms, "
              + "p99 \(String(format: "%.2f", extra[extra.count * 99 / 100])) ms over \(extra.count) (debug build, loopback)")
    }

    @Test func eventsFlowAgainAfterNATSRestartsAndTheGapIsCounted() throws {
        let cluster = try NodeCluster(nodes: 2)
        let ada = try cluster.person("ada")
        _ = try cluster.b.subscribe(["subscriptionID": "notes", "subscriptionType": "query", "query": ["recordType": "Note"],
                                     "firesOn": ["create", "update", "delete"]], as: ada)
        let mailbox = try cluster.b.webcourier(as: ada)
        try cluster.save("before", on: cluster.a, as: ada)
        #expect(try cluster.b.notifications(at: mailbox, count: 1, seconds: 20).first?["recordName"] == "before")

        #expect(Self.busState(of: cluster.b) == "connected")
        try cluster.nats.stop(abruptly: true)
        // Both nodes keep serving their own clients while the bus is down; /healthz says so (200, N16).
        try cluster.save("while-down", on: cluster.a, as: ada)
        let down = Date(timeIntervalSinceNow: 30)
        while Self.busState(of: cluster.b) != "disconnected" && Date() < down { Thread.sleep(forTimeInterval: 0.05) }
        #expect(Self.busState(of: cluster.b) == "disconnected")
        try cluster.nats.start()
        let deadline = Date(timeIntervalSinceNow: 60)
        while NodeCluster.counter("tandem_bus_reconnects_total", on: cluster.a) < 1 || NodeCluster.counter("tandem_bus_reconnects_total", on: cluster.b) < 1 {
            guard Date() < deadline else { throw TestFailure("the nodes did not reconnect to nats-server") }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(Self.busState(of: cluster.b) == "connected")
        #expect(try cluster.b.request("GET", cluster.b.baseURL + "/healthz", token: .some(nil)).json["bus"]?["reconnects"]?.int64Value ?? 0 >= 1)
        // Operators see the gap: a log line on each node (and the counter above).
        #expect(cluster.b.standardError?.value.contains("may have been missed") == true, "\(cluster.b.standardError?.value.suffix(2000) ?? "")")

        try cluster.save("after", on: cluster.a, as: ada)
        // What A buffered while the bus was down may come first (libnats sends it on reconnect).
        var heard: [String] = []
        let until = Date(timeIntervalSinceNow: 20)
        while !heard.contains("after") && Date() < until {
            heard += try cluster.b.notifications(at: mailbox, count: 1, seconds: 2).compactMap { $0["recordName"]?.stringValue }
        }
        #expect(heard.contains("after"), "\(heard)")
    }

    /// When `probe` first satisfied `seen` (polled every millisecond, up to 20 s), or nil.
    static func arrival(_ probe: StreamProbe, _ seen: @escaping (StreamProbe) -> Bool) async -> ContinuousClock.Instant? {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if seen(probe) { return .now }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return nil
    }

    /// `bus.state` in `node`'s `/healthz` (nil when it does not answer 200).
    static func busState(of node: TestServer) -> String? {
        guard let response = try? node.request("GET", node.baseURL + "/healthz", token: .some(nil)), response.status == 200 else { return nil }
        return response.json["bus"]?["state"]?.stringValue
    }
}
