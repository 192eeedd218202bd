import Foundation
import Synchronization
import Testing
import TandemCore
import TandemCrypto
import TandemNATS
import TandemTestSupport
@testable import TandemServer

/// Events queued in a node's outbox leave as batches (decisions N49): two `EventBus`es over a
/// real nats-server, the sender's transport held shut until hundreds of events have queued, so
/// they must leave in batches; the receiver must hear every one, once, in publish order.
@Suite(.serialized)
struct BusBatchTests {
    /// A NATS transport whose `publish` waits, while `held`, until `release()`: the events
    /// published meanwhile stay in the bus's outbox, as behind a busy transport.
    final class HeldNATSTransport: BusTransport, @unchecked Sendable {
        let connection: NATSConnection
        private let gate = DispatchSemaphore(value: 0)
        let held: Atomic<Bool>
        let entered = Atomic<Bool>(false)

        init(_ server: NATSServer, held: Bool) throws {
            connection = try NATSConnection(servers: [server.url], name: "batch-test") { _ in }
            self.held = Atomic(held)
        }

        var summary: String { "held \(connection.servers)" }
        var maxPayload: Int { connection.maxPayload }

        func start(prefix: String, receive: @escaping @Sendable ([UInt8]) -> Void, missed: @escaping @Sendable (String) -> Void) throws {
            try connection.subscribe(prefix + ">", handler: receive)
        }

        func publish(subject: String, payload: [UInt8]) -> Bool {
            entered.store(true, ordering: .releasing)
            if held.load(ordering: .acquiring) { gate.wait() }
            return connection.publish(subject, payload)
        }

        func release() {
            held.store(false, ordering: .releasing)
            gate.signal()
        }

        func close() { connection.close() }
    }

    static func wait(seconds: Double = 20, until condition: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while !condition() && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return condition()
    }

    /// A frame for `connection` on node `to`, whose bytes carry `number` (and `size` bytes).
    static func frame(_ number: Int, size: Int) -> BusEvent.Body {
        .session(SessionTraffic(container: "iCloud.com.example.batch", environment: "development",
                                kind: .deliver(receivers: ["node-b": [UInt64(number)]], text: nil,
                                               binary: Data(Array("frame \(number) ".utf8) + Array(repeating: 0x61, count: size)),
                                               droppable: number % 2 == 0)))
    }

    /// What an event says for the comparison: the frame's number, or "heartbeat".
    static func label(_ event: BusEvent) -> String {
        guard case .session(let traffic) = event.body else { return "other" }
        switch traffic.kind {
        case .deliver(let receivers, _, _, _): return "frame \(receivers["node-b"]?.first ?? 0)"
        case .heartbeat: return "heartbeat"
        default: return "other"
        }
    }

    @Test func queuedEventsLeaveInBatchesWithinTheLimitAndArriveEveryOneInOrder() throws {
        // A small max_payload, so that the queue needs several batches and the limit is met.
        let server = try NATSServer(arguments: ["--config", try NATSServer.configFile("max_payload: 32768\n")])
        let secret = Digest.randomBytes(32)
        let sending = try HeldNATSTransport(server, held: true)
        let receiving = try HeldNATSTransport(server, held: false)
        let a = EventBus(transport: sending, secret: secret)
        let b = EventBus(transport: receiving, secret: secret)
        let heard = Mutex<[String]>([])
        b.subscribe { delivery in
            if case .event(let event) = delivery { heard.withLock { $0.append(Self.label(event)) } }
        }
        try a.start()
        try b.start()
        defer { a.stop(); b.stop() }

        // The first event takes the outbox thread into the held transport; the rest queue behind it.
        var expected: [String] = []
        a.publish(Self.frame(0, size: 10))
        expected.append("frame 0")
        #expect(Self.wait { sending.entered.load(ordering: .acquiring) })
        for number in 1...300 {
            // A heartbeat (another subject) now and then splits a run of frames.
            if number % 70 == 0 {
                a.publish(.session(SessionTraffic(container: "", environment: "", kind: .heartbeat)))
                expected.append("heartbeat")
            }
            a.publish(Self.frame(number, size: number % 3 == 0 ? 2_000 : 300))
            expected.append("frame \(number)")
        }
        sending.release()

        #expect(Self.wait { heard.withLock { $0.count } >= expected.count })
        Thread.sleep(forTimeInterval: 0.2)
        let got = heard.withLock { $0 }
        #expect(got.count == expected.count, "every event once: \(got.count) of \(expected.count)")
        #expect(got == expected, "in publish order; first difference at \(zip(got, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
        let published = a.published.load(ordering: .relaxed), messages = a.messages.load(ordering: .relaxed)
        #expect(published == expected.count)
        #expect(messages > 6 && messages < expected.count / 4,
                "\(published) events in \(messages) messages: batched, and split by subject and by the 32 KiB limit")
        #expect(b.received.load(ordering: .relaxed) == expected.count)
        #expect(b.rejected.load(ordering: .relaxed) == 0 && b.dropped.load(ordering: .relaxed) == 0)
        #expect(a.metricsText.contains("tandem_bus_messages_total \(messages)\n"))
        print("batches: \(published) events in \(messages) bus messages")
    }

    @Test func aBatchKeepsEveryEventInOrderAndWithinTheLimit() throws {
        let queued: [(subject: String, json: [UInt8])] = (0..<50).map { number in
            (number / 20 == 1 ? "tandem.1.cluster" : "tandem.1.x", Array("{\"n\":\(number),\"pad\":\"\(String(repeating: "p", count: number * 7))\"}".utf8))
        }
        let limit = 2_000
        let batches = BusBatches.group(queued, limit: limit)
        var numbers: [Int] = []
        for batch in batches {
            #expect(batch.json.count <= limit)
            let value = try JSONParser.parse(batch.json)
            let objects = value.arrayValue ?? [value]
            #expect(objects.count == batch.events)
            #expect(batch.events == 1 ? batch.json.first == UInt8(ascii: "{") : batch.json.first == UInt8(ascii: "["),
                    "a lone event is sent as it always was")
            numbers += objects.compactMap { $0["n"]?.int64Value }.map { Int($0) }
            #expect(objects.allSatisfy { ($0["n"]?.int64Value).map { $0 / 20 == 1 } == (batch.subject == "tandem.1.cluster") })
        }
        #expect(numbers == Array(0..<50))
        #expect(batches.count < 50 && batches.count >= 4)
    }
}
