import Dispatch
import Foundation
import Synchronization
import TandemCore
import TandemHTTP

/// Deliveries seen by bench peers: a count, and latencies (seconds) of messages sent inside the
/// measured window.
final class DeliveryStats: Sendable {
    struct State {
        var count = 0
        var latencies: [Double] = []
        var windowStart: UInt64 = 0
        var windowEnd: UInt64 = .max
        var recordLatency = true
    }
    let state = Locked(State())

    func record(sentAt: UInt64, now: UInt64) {
        state.withLock { state in
            guard sentAt >= state.windowStart && sentAt < state.windowEnd else { return }
            state.count += 1
            if state.recordLatency { state.latencies.append(Double(now &- sentAt) / 1e9) }
        }
    }

    func open(latencies: Bool) {
        state.withLock { $0 = State(windowStart: DispatchTime.now().uptimeNanoseconds, recordLatency: latencies) }
    }

    func close() { state.withLock { $0.windowEnd = DispatchTime.now().uptimeNanoseconds } }
}

/// One bench connection to a stream WebSocket (Tandem's, or the reference broadcast server):
/// sends binary frames whose last 8 bytes are the send time, and counts what arrives.
final class SessionPeer: Sendable {
    let client: WebSocketClient
    private let replies = Locked<[Int64: CheckedContinuation<JSONValue, Never>]>([:])
    private let nextID = Atomic<Int64>(1)
    private let frame = Locked<[UInt8]>([])
    private let stopped = Atomic<Bool>(false)

    private init(client: WebSocketClient) { self.client = client }

    /// Connects and starts reading; Tandem peers wait for the server's hello.
    static func connect(_ url: String, token: String?, stats: DeliveryStats, tandem: Bool,
                        localAddress: String? = nil) async throws -> SessionPeer {
        let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        var configuration = WebSocketConfiguration()
        configuration.sendQueueMessages = 256
        let peer = SessionPeer(client: try await WebSocketClient.connect(to: URL(string: url)!, headers: headers,
                                                                         configuration: configuration, localAddress: localAddress))
        let hello: JSONValue? = await withCheckedContinuation { continuation in
            if tandem { peer.replies.withLock { $0[0] = continuation } }
            Task.detached { await peer.read(stats) }
            if !tandem { continuation.resume(returning: nil) }
        }
        _ = hello
        return peer
    }

    private func read(_ stats: DeliveryStats) async {
        for await event in client.events {
            if stopped.load(ordering: .relaxed) { return }
            switch event {
            case .message(.binary(let bytes)):
                guard bytes.count >= 8 else { continue }
                var sentAt: UInt64 = 0
                for index in (bytes.count - 8)..<bytes.count { sentAt = sentAt << 8 | UInt64(bytes[index]) }
                stats.record(sentAt: sentAt, now: DispatchTime.now().uptimeNanoseconds)
            case .message(.text(let text)):
                guard let envelope = try? JSONParser.parse(text) else { continue }
                let id: Int64? = switch envelope["type"]?.stringValue {
                case "hello": 0
                case "reply": envelope["id"]?.int64Value
                default: nil
                }
                if let id, let waiter = replies.withLock({ $0.removeValue(forKey: id) }) { waiter.resume(returning: envelope) }
            case .closed:
                return
            }
        }
    }

    /// Stops counting (what is still buffered is dropped) and closes the connection.
    func stop() {
        stopped.store(true, ordering: .relaxed)
        client.close()
    }

    /// Sends an envelope and waits for its reply.
    func request(_ type: String, _ body: JSONObject) async -> JSONValue {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        var envelope = body
        envelope["type"] = .string(type)
        envelope["id"] = .int(id)
        return await withCheckedContinuation { continuation in
            replies.withLock { $0[id] = continuation }
            let text = JSONWriter.string(.object(envelope))
            Task { await client.send(text: text) }
        }
    }

    /// Messenger frames for `session` (Tandem) or bare payloads (reference): 8-byte payload;
    /// unreliable (a full queue drops them, G5) unless `reliable`.
    func prepare(session: UUID?, reliable: Bool = false) {
        var bytes: [UInt8] = []
        if let session {
            bytes = [0x01, reliable ? 0x01 : 0x00]
            withUnsafeBytes(of: session.uuid) { bytes.append(contentsOf: $0) }
            bytes += [0, 0, 0, 0, 0, 4] + Array("tick".utf8) + [0, 0]
        }
        frame.withLock { $0 = bytes + [UInt8](repeating: 0, count: 8) }
    }

    /// Sends one frame stamped with the current time; waits while this client's queue is full.
    func send() async {
        var bytes = frame.withLock { $0 }
        let now = DispatchTime.now().uptimeNanoseconds
        for index in 0..<8 { bytes[bytes.count - 8 + index] = UInt8(truncatingIfNeeded: now >> UInt64(56 - index * 8)) }
        await client.send(binary: bytes)
    }
}
