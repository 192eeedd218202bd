import Dispatch
import Foundation
import Synchronization

/// The one fan-out behind the three hubs (DESIGN.md §5; decisions N1): what a commit publishes
/// (matched notifications, conversation effects, revoked grants) goes through `publish`, and
/// each hub subscribes and delivers to this node's sockets and sinks.
///
/// Without a transport it is in-process: `publish` calls the subscribers at once, on the
/// caller's thread, as the hubs did before. With one (`--bus nats://…`), `publish` also sends
/// the event to the other nodes; events from them are decoded and handed to the subscribers
/// on one serial queue, in the order each node sent them (N5). A node's own events never wait
/// for the bus, so a node whose bus is down still serves its own clients as a single node.
final class EventBus: Sendable {
    /// What a subscriber is handed.
    enum Delivery: Sendable {
        case event(BusEvent)
        /// Events from other nodes may have been lost (the bus connection dropped and came back,
        /// or this node fell behind): what a node caches from them may be stale (N6).
        case missed(reason: String)
    }

    /// This process's name on the bus (random at each start).
    let node = UUID().uuidString.lowercased()
    let transport: (any BusTransport)?
    private let log: RequestLog?
    private let subscribers = Mutex<[@Sendable (Delivery) -> Void]>([])
    private let inbox = DispatchQueue(label: "tandem-bus-inbox")

    /// Counters for `/metrics` (N8).
    let published = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let missed = Atomic<Int>(0)

    init(transport: (any BusTransport)? = nil, log: RequestLog? = nil) {
        self.transport = transport
        self.log = log
    }

    /// "in-process", or the transport's summary.
    var summary: String { transport?.summary ?? "in-process" }

    /// Whether this node has no transport (one node; the start line then says nothing of the bus).
    var isLocal: Bool { transport == nil }

    /// Adds a subscriber; subscribers are added while the server is built, before `start`.
    func subscribe(_ subscriber: @escaping @Sendable (Delivery) -> Void) {
        subscribers.withLock { $0.append(subscriber) }
    }

    /// Connects the transport, if any, and starts receiving the other nodes' events.
    /// - Throws: the transport's error when the bus cannot be reached.
    func start() throws {
        guard let transport else { return }
        try transport.start(prefix: BusEvent.prefix, receive: { [self] payload in
            inbox.async { [self] in receive(payload) }
        }, missed: { [self] reason in
            missed.add(1, ordering: .relaxed)
            log?.message("bus: events from other nodes may have been missed (\(reason)); streams resume from their change tokens")
            inbox.async { [self] in deliver(.missed(reason: reason)) }
        })
    }

    /// Hands `body` to this node's subscribers now, then to the other nodes. Called after commit
    /// (or, for notifications, after matching); never blocks on the network.
    func publish(_ body: BusEvent.Body) {
        let event = BusEvent(origin: node, body: body)
        deliver(.event(event))
        guard let transport else { return }
        let payload: Data
        do {
            payload = try JSONEncoder().encode(event)
        } catch {
            dropped.add(1, ordering: .relaxed)
            log?.message("bus: an event could not be encoded: \(error)")
            return
        }
        if transport.publish(subject: event.subject, payload: [UInt8](payload)) {
            published.add(1, ordering: .relaxed)
        } else {
            dropped.add(1, ordering: .relaxed)
        }
    }

    /// Stops receiving; what is queued for the subscribers is delivered first.
    func stop() {
        transport?.close()
        inbox.sync {}
    }

    private func receive(_ payload: [UInt8]) {
        let event: BusEvent
        do {
            event = try JSONDecoder().decode(BusEvent.self, from: Data(payload))
        } catch {
            dropped.add(1, ordering: .relaxed)
            log?.message("bus: a message that is not an event was ignored: \(error)")
            return
        }
        guard event.origin != node else { return }
        received.add(1, ordering: .relaxed)
        deliver(.event(event))
    }

    private func deliver(_ delivery: Delivery) {
        for subscriber in subscribers.withLock({ $0 }) { subscriber(delivery) }
    }

    /// The bus's counters in Prometheus text (`/metrics`).
    var metricsText: String {
        var out = ""
        for (name, help, value) in [
            ("tandem_bus_published_total", "Events this node sent to the other nodes.", published.load(ordering: .relaxed)),
            ("tandem_bus_received_total", "Events received from other nodes.", received.load(ordering: .relaxed)),
            ("tandem_bus_dropped_total", "Events not sent (the bus's buffer was full) or not readable.", dropped.load(ordering: .relaxed)),
            ("tandem_bus_reconnects_total", "Times events from other nodes may have been missed (reconnects, falling behind).",
             missed.load(ordering: .relaxed)),
        ] {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        return out
    }
}
