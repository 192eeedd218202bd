import Dispatch
import Foundation
import Synchronization
import TandemCore
import TandemCrypto

/// The one fan-out behind the three hubs (DESIGN.md §5; decisions N1): what a commit publishes
/// (matched notifications, conversation effects, revoked grants) goes through `publish`, and
/// each hub subscribes and delivers to this node's sockets and sinks.
///
/// Without a transport it is in-process: `publish` calls the subscribers at once, on the
/// caller's thread, as the hubs did before. With one (`--bus nats://…`), `publish` also sends
/// the event to the other nodes; events from them are decoded and handed to the subscribers
/// on one serial queue, in the order each node sent them (N5). A node's own events never wait
/// for the bus, so a node whose bus is down still serves its own clients as a single node.
///
/// Publishing never blocks the caller (a writer's after-commit hook, the change hub's thread):
/// events for the other nodes go into a bounded outbox that one thread (`tandem-bus-outbox`)
/// hands to the transport; past `outboxBytes` queued, new ones are dropped and counted, as
/// `ChangeHub` does past its capacity. A transport call that takes longer than `stuckAfter`
/// (a NATS server that stopped reading: libnats then writes on the caller's thread with no
/// deadline) is logged once per stall and counted in `tandem_bus_stalls_total` (N27).
///
/// Events that queue up in the outbox while the transport is busy leave together: a run of
/// consecutive queued events for one subject is sent as ONE message, a JSON array of the events
/// behind one MAC, as long as it fits the transport's `maxPayload` (decisions N49). The order
/// of all events of this node is unchanged; a receiver hands a batch's events to the
/// subscribers one by one, in the array's order.
final class EventBus: Sendable {
    /// What a subscriber is handed.
    enum Delivery: Sendable {
        case event(BusEvent)
        /// Events from other nodes may have been lost (the bus connection dropped and came back,
        /// or this node fell behind): what a node caches from them may be stale (N6).
        case missed(reason: String)
    }

    /// This process's name on the bus (random at each start).
    let node = UUID.random().uuidString.lowercased()
    let transport: (any BusTransport)?
    private let log: RequestLog?
    private let subscribers = Locked<[@Sendable (Delivery) -> Void]>([])
    private let inbox = DispatchQueue(label: "tandem-bus-inbox")
    /// Events encoded as JSON (not yet sealed) waiting for the outbox thread, and their total size in bytes.
    private let outbox = Locked<(events: [(subject: String, json: [UInt8])], bytes: Int)>(([], 0))
    private let outboxSignal = DispatchSemaphore(value: 0)
    private let outboxStopped = Atomic<Bool>(false)
    private let outboxStarted = Atomic<Bool>(false)
    private let outboxExited = DispatchSemaphore(value: 0)
    /// Most bytes of encoded events queued for the transport (64 MiB by default).
    private let outboxBytes: Int
    /// When the transport call in progress started (`DispatchTime.uptimeNanoseconds`), 0 when idle.
    private let sendingSince = Atomic<UInt64>(0)
    /// Whether the current stall was logged (once per stall).
    private let stallLogged = Atomic<Bool>(false)
    /// How long one transport call may take before the bus counts a stall.
    private let stuckAfter: Duration
    /// The key of every event's HMAC-SHA-256 (N28), derived from the nodes' shared `secret.key`.
    private let key: [UInt8]
    /// The number of this node's last sealed message (N73); only the outbox thread seals.
    private let sealed = Atomic<UInt64>(0)
    /// Per other node: the number of its last message accepted, and when (ms since 1970) (N73).
    private let lastAccepted = Locked<[String: (sequence: UInt64, at: UInt64)]>([:])
    private let logInterval = LogInterval()

    /// Counters for `/metrics` (N8).
    let published = Atomic<Int>(0)
    /// Bus messages sent: `published` divided by this is the mean batch (N49).
    let messages = Atomic<Int>(0)
    let received = Atomic<Int>(0)
    let dropped = Atomic<Int>(0)
    let missed = Atomic<Int>(0)
    let stalls = Atomic<Int>(0)
    let rejected = Atomic<Int>(0)
    /// Receive time minus publish time of other nodes' events (N41).
    let lag = BusLag()

    /// - `secret`: the server's `secret.key`, the same on every node; events are authenticated
    ///   with a key derived from it, and those whose MAC fails are dropped (N28).
    /// - `outboxBytes`: most bytes of encoded events waiting to be sent; past it, events are
    ///   dropped and counted.
    /// - `stuckAfter`: a transport call slower than this counts as a stall (logged, counted).
    init(transport: (any BusTransport)? = nil, log: RequestLog? = nil, secret: [UInt8] = Digest.randomBytes(32),
         outboxBytes: Int = 64 << 20, stuckAfter: Duration = .seconds(3)) {
        self.transport = transport
        self.log = log
        // v2: the MAC covers a sequence number and a time in front of the events (N73); nodes of
        // the v1 format and of this one drop each other's messages as not theirs.
        key = Digest.hmacSHA256(key: secret, message: Array("tandem bus event v2".utf8))
        self.outboxBytes = outboxBytes
        self.stuckAfter = stuckAfter
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
        outboxStarted.store(true, ordering: .releasing)
        let thread = Thread { [self] in drainOutbox(transport) }
        thread.name = "tandem-bus-outbox"
        thread.start()
    }

    /// Hands `body` to this node's subscribers now, then queues it for the other nodes. Called
    /// after commit (or, for notifications, after matching); never blocks on the network.
    ///
    /// - Returns: false when the other nodes will not get it: it could not be encoded, is over
    ///   the bus's `max_payload` (they are told they missed one instead, N30) or the outbox is
    ///   full. True without a bus.
    /// Whether `body` would reach the other nodes as one bus message with `headroom` bytes to
    /// spare (N80); true without a transport.
    func fits(_ body: BusEvent.Body, headroom: Int) -> Bool {
        guard let transport else { return true }
        let event = BusEvent(origin: node, body: body, sentAt: Date().timeIntervalSince1970)
        guard let json = (try? BusFastCodec.encode(event)) ?? (try? [UInt8](JSONEncoder().encode(event.forOtherNodes))) else { return false }
        return Self.sealBytes + json.count + headroom <= transport.maxPayload
    }

    @discardableResult
    func publish(_ body: BusEvent.Body) -> Bool {
        let event = BusEvent(origin: node, body: body, sentAt: Date().timeIntervalSince1970)
        deliver(.event(event))
        guard let transport else { return true }
        var json: [UInt8]
        var tooLarge = false
        do {
            json = try BusFastCodec.encode(event) ?? [UInt8](JSONEncoder().encode(event.forOtherNodes))
        } catch {
            dropped.add(1, ordering: .relaxed)
            log?.message("bus: an event could not be encoded: \(error)")
            return false
        }
        var subject = event.subject
        if Self.sealBytes + json.count > transport.maxPayload {
            // The other nodes cannot get it: they are told they missed something instead (N30).
            let bytes = Self.sealBytes + json.count
            dropped.add(1, ordering: .relaxed)
            if logInterval.allows("too-large") {
                log?.message("bus: an event of \(bytes) bytes is over the bus's limit of \(transport.maxPayload) bytes "
                             + "(NATS max_payload); the other nodes are told they missed one")
            }
            tooLarge = true
            let marker = BusEvent(origin: node, body: .tooLarge(bytes: bytes), sentAt: event.sentAt)
            subject = marker.subject
            json = [UInt8]((try? JSONEncoder().encode(marker)) ?? Data())
        }
        noticeStall()
        let encoded = json
        let accepted = outbox.withLock { queue -> Bool in
            guard queue.bytes + encoded.count <= outboxBytes else { return false }
            queue.events.append((subject, encoded))
            queue.bytes += encoded.count
            return true
        }
        if accepted { outboxSignal.signal() } else { dropped.add(1, ordering: .relaxed) }
        return accepted && !tooLarge
    }

    /// Bytes of the MAC in front of every message (HMAC-SHA-256).
    static let macBytes = 32
    /// Bytes of the sequence number and time after the MAC (N73).
    static let headerBytes = 16
    /// Everything a message carries besides its events.
    static let sealBytes = macBytes + headerBytes
    /// How far a message's time may be from the receiver's clock (ms): beyond it, the message is
    /// dropped as replayed (or the nodes' clocks are apart; keep them synchronised).
    static let freshness: UInt64 = 5 * 60 * 1000

    /// `json` sealed (N28, N73): 32 bytes of HMAC-SHA-256 under `key` over what follows; this
    /// node's message number (8 bytes, big-endian, from 1 at each start); the time it was sealed
    /// (8 bytes, ms since 1970); then the JSON.
    private func seal(_ json: [UInt8]) -> [UInt8] {
        let sequence = sealed.add(1, ordering: .relaxed).newValue
        let header = Self.bigEndian(sequence) + Self.bigEndian(Self.milliseconds())
        let body = header + json
        return Digest.hmacSHA256(key: key, message: body) + body
    }

    private static func bigEndian(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian, Array.init) }

    private static func milliseconds() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    /// Whether a message numbered `sequence` from `origin`, sealed at `at`, may be taken: newer
    /// than the last one taken from that node, and sealed within `freshness` of this node's
    /// clock. A message recorded off the bus and published again (a replay) fails the first
    /// test while its node runs and the second once the receiver could have forgotten it.
    private func accepts(sequence: UInt64, at: UInt64, from origin: String) -> Bool {
        let now = Self.milliseconds()
        guard at + Self.freshness >= now, at <= now + Self.freshness else { return false }
        return lastAccepted.withLock { table in
            if let last = table[origin], sequence <= last.sequence { return false }
            table[origin] = (sequence, now)
            if table.count > 64 {   // nodes that stopped: forget them once they are past freshness
                table = table.filter { now - $0.value.at < Self.freshness }
            }
            return true
        }
    }

    /// The outbox thread: hands queued events to the transport in publish order until `stop`,
    /// each run of events for one subject as one message (`BusBatches`, N49).
    private func drainOutbox(_ transport: any BusTransport) {
        while true {
            outboxSignal.wait()
            let queued = outbox.withLock { queue in
                defer { queue = ([], 0) }
                return queue.events
            }
            for batch in BusBatches.group(queued, limit: transport.maxPayload - Self.sealBytes) {
                let payload = seal(batch.json)
                sendingSince.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
                let sent = transport.publish(subject: batch.subject, payload: payload)
                sendingSince.store(0, ordering: .releasing)
                if stallLogged.exchange(false, ordering: .acquiringAndReleasing) {
                    log?.message("bus: publishing to the bus works again; events queued past the outbox's limit were dropped")
                }
                if sent {
                    published.add(batch.events, ordering: .relaxed)
                    messages.add(1, ordering: .relaxed)
                } else {
                    dropped.add(batch.events, ordering: .relaxed)
                }
            }
            if outboxStopped.load(ordering: .acquiring) && outbox.withLock({ $0.events.isEmpty }) { break }
        }
        outboxExited.signal()
    }

    /// Counts and logs (once per stall) a transport call that has been running for longer than
    /// `stuckAfter`: checked on each publish, so a stall is seen as soon as anything is written.
    private func noticeStall() {
        let since = sendingSince.load(ordering: .acquiring)
        guard since != 0, DispatchTime.now().uptimeNanoseconds &- since > UInt64(stuckAfter.components.seconds) * 1_000_000_000
                + UInt64(stuckAfter.components.attoseconds / 1_000_000_000) else { return }
        guard !stallLogged.exchange(true, ordering: .acquiringAndReleasing) else { return }
        stalls.add(1, ordering: .relaxed)
        log?.message("bus: publishing to the bus is stuck (one send has taken more than \(stuckAfter)); "
                     + "events for other nodes are queued, then dropped past \(outboxBytes >> 20) MiB; writes go on")
    }

    /// Sends what is queued (unless the transport is stuck), stops receiving; what is queued for
    /// the subscribers is delivered first.
    func stop() {
        if outboxStarted.load(ordering: .acquiring), !outboxStopped.exchange(true, ordering: .acquiringAndReleasing) {
            outboxSignal.signal()
            _ = outboxExited.wait(timeout: .now() + .seconds(2))
        }
        transport?.close()
        inbox.sync {}
    }

    private func receive(_ payload: [UInt8]) {
        let mac = Self.macBytes
        guard payload.count > Self.sealBytes,
              Digest.equal(Array(payload[..<mac]), Digest.hmacSHA256(key: key, message: Array(payload[mac...]))) else {
            rejected.add(1, ordering: .relaxed)
            if logInterval.allows("forged") {
                log?.message("bus: a message whose MAC does not match was dropped (a client without this cluster's secret.key "
                             + "published on tandem.1.>, or a node with another secret.key)")
            }
            return
        }
        let events: [BusEvent]
        do {
            events = try BusBatches.decode(payload[Self.sealBytes...])
        } catch {
            dropped.add(1, ordering: .relaxed)
            log?.message("bus: a message that is not an event was ignored: \(error)")
            return
        }
        let number = { (offset: Int) in payload[(mac + offset)..<(mac + offset + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        // Every event of a message is its sender's (a batch is one node's outbox).
        guard let origin = events.first?.origin, origin != node else { return }
        guard accepts(sequence: number(0), at: number(8), from: origin) else {
            rejected.add(1, ordering: .relaxed)
            if logInterval.allows("replayed") {
                log?.message("bus: a message from node \(origin) was dropped as replayed: its number is not past the last one "
                             + "taken from that node, or it was sealed more than 5 minutes from this node's clock "
                             + "(keep the nodes' clocks synchronised)")
            }
            return
        }
        for event in events { receive(event) }
    }

    /// One event heard from another node (alone or in a batch), in the order it was sent.
    private func receive(_ event: BusEvent) {
        guard event.origin != node else { return }
        received.add(1, ordering: .relaxed)
        if let sentAt = event.sentAt { lag.observe(sentAt: sentAt) }
        if case .tooLarge(let bytes) = event.body {
            let reason = "node \(event.origin) had an event of \(bytes) bytes, over the bus's limit"
            missed.add(1, ordering: .relaxed)
            if logInterval.allows("missed-too-large") {
                log?.message("bus: events from other nodes may have been missed (\(reason)); streams resume from their change tokens")
            }
            deliver(.missed(reason: reason))
            return
        }
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
            ("tandem_bus_messages_total", "Bus messages this node sent; several queued events for one subject leave as one.",
             messages.load(ordering: .relaxed)),
            ("tandem_bus_received_total", "Events received from other nodes.", received.load(ordering: .relaxed)),
            ("tandem_bus_dropped_total", "Events not sent (the bus's buffer was full) or not readable.", dropped.load(ordering: .relaxed)),
            ("tandem_bus_reconnects_total", "Times events from other nodes may have been missed (reconnects, falling behind).",
             missed.load(ordering: .relaxed)),
            ("tandem_bus_stalls_total", "Times sending to the bus took longer than a few seconds (the bus stopped reading).",
             stalls.load(ordering: .relaxed)),
            ("tandem_bus_rejected_total", "Messages dropped because their MAC did not match (not from a node of this cluster).",
             rejected.load(ordering: .relaxed)),
        ] {
            out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        return out + lag.metricsText
    }
}
