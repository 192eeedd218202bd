import CWebSockets
import TandemCore

/// Wakes an lws service thread to look at one channel (its queue has output, or it should
/// close). Any thread.
protocol ChannelAttention: Sendable {
    func attention(_ channelID: UInt64)
}

/// The transport half of one WebSocket, shared by server connections and `WebSocketClient`:
/// the bounded send queue, writing frames, reassembling received fragments, close codes.
///
/// Two sides: `offer`, `requestClose` and `waitForRoom` are called from any thread and touch
/// only `shared` (under its lock); everything else runs on the owning lws service thread,
/// which is why the class can be `@unchecked Sendable`. The channel never holds a wsi that
/// lws has destroyed: `detach()` runs from the wsi's close callback.
final class WebSocketChannel: @unchecked Sendable {
    /// What happens to a reliable message that does not fit the queue.
    enum OverflowPolicy {
        /// Close the connection with `WebSocketClose.slowConsumer` (server: writers never wait).
        case closeSlowConsumer
        /// Report `.full`; the sender waits for room (`WebSocketClient`: the sender is the app).
        case reportFull
    }

    enum Offer: Equatable {
        case queued, dropped, closed, full
    }

    enum Received {
        case incomplete
        case message(WebSocketMessage)
        case tooBig
    }

    private struct CloseRequest {
        var close: WebSocketClose
        /// Skip what is queued (slow consumer, shutdown) instead of writing it first.
        var immediate: Bool
    }

    private struct Shared: ~Copyable {
        var queue: OutboundQueue
        var closing: CloseRequest?
        var closed = false
        /// An attention request is on its way to the service thread.
        var attentionPending = false
        var dropped = 0
        var roomWaiters: [CheckedContinuation<Void, Never>] = []
    }

    let id: UInt64
    let configuration: WebSocketConfiguration
    private let policy: OverflowPolicy
    private let shared: Locked<Shared>
    private let notifier: any ChannelAttention
    private let counters: ServerCounters?

    // Service thread.
    private(set) var wsi: OpaquePointer?
    private var current: OutboundMessage?
    private var currentOffset = 0
    private var assembly: [UInt8] = []
    private var assembling = false
    private var assemblingBinary = false
    private var peerClose: WebSocketClose?
    private var sentClose: WebSocketClose?

    init(id: UInt64, wsi: OpaquePointer?, configuration: WebSocketConfiguration, policy: OverflowPolicy,
         notifier: any ChannelAttention, counters: ServerCounters?) {
        self.id = id
        self.wsi = wsi
        self.configuration = configuration
        self.policy = policy
        self.notifier = notifier
        self.counters = counters
        shared = Locked(Shared(queue: OutboundQueue(maxMessages: configuration.sendQueueMessages,
                                                   maxBytes: configuration.sendQueueBytes)))
    }

    // MARK: Any thread

    /// Queues a message, never blocking beyond a short lock.
    func offer(_ message: OutboundMessage) -> Offer {
        let (offer, wake): (Offer, Bool) = shared.withLock { shared in
            guard !shared.closed, shared.closing == nil else { return (.closed, false) }
            switch shared.queue.offer(message) {
            case .queued(let dropped):
                count(dropped: dropped, in: &shared)
                return (.queued, Self.claimAttention(&shared))
            case .droppedOffered:
                count(dropped: 1, in: &shared)
                return (.dropped, false)
            case .overflow(let dropped):
                count(dropped: dropped, in: &shared)
                if policy == .reportFull { return (.full, false) }
                shared.queue.removeAll()
                shared.closing = CloseRequest(close: WebSocketClose(code: WebSocketClose.slowConsumer,
                                                                    reason: "slow consumer: send queue full"),
                                              immediate: true)
                counters?.slowConsumerClosed()
                return (.closed, Self.claimAttention(&shared))
            }
        }
        if wake { notifier.attention(id) }
        return offer
    }

    /// Asks for a close with `close`; the first request wins. `immediate` drops what is queued,
    /// otherwise it is written first.
    func requestClose(_ close: WebSocketClose, immediate: Bool) {
        let wake = shared.withLock { shared in
            guard !shared.closed, shared.closing == nil || (immediate && shared.closing?.immediate == false) else {
                return false
            }
            shared.closing = CloseRequest(close: shared.closing?.close ?? close, immediate: immediate)
            if immediate { shared.queue.removeAll() }
            return Self.claimAttention(&shared)
        }
        if wake { notifier.attention(id) }
    }

    /// Suspends until a message of `size` bytes would fit, or the channel closes.
    func waitForRoom(for size: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = shared.withLock { shared in
                if shared.closed || shared.closing != nil || shared.queue.hasRoom(for: size) { return true }
                shared.roomWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Messages dropped so far because the queue was full.
    var droppedMessages: Int { shared.withLock { $0.dropped } }

    var isClosed: Bool { shared.withLock { $0.closed || $0.closing != nil } }

    private func count(dropped: Int, in shared: inout Shared) {
        guard dropped > 0 else { return }
        shared.dropped += dropped
        counters?.messagesDropped(dropped)
    }

    private static func claimAttention(_ shared: inout Shared) -> Bool {
        guard !shared.attentionPending else { return false }
        shared.attentionPending = true
        return true
    }

    // MARK: Service thread

    /// Seconds a requested close may take (writing what is queued first, then lws' close
    /// handshake) before the connection is dropped without more ado.
    static let closeTimeout: Int32 = 5

    /// The client handshake completed: writes may start.
    func attach(_ wsi: OpaquePointer) {
        self.wsi = wsi
    }

    /// The attention request arrived: ask lws for a writeable callback, and bound a close.
    func attend() {
        let closing = shared.withLock { shared in
            shared.attentionPending = false
            return shared.closing
        }
        guard let wsi else { return }
        if let closing {
            if closing.immediate && lws_partial_buffered(wsi) != 0 {
                // lws still holds bytes the peer does not read, and writes nothing more (not
                // even a close frame) before they are gone: drop the connection now.
                sentClose = closing.close
                lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
                return
            }
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, Self.closeTimeout)
        }
        lws_callback_on_writable(wsi)
    }

    /// The writeable callback: writes queued messages (large ones as fragments of at most
    /// `capacity` bytes) until lws has to buffer or `capacity` bytes went out, or closes.
    /// Returns what the callback returns (-1 closes, after `lws_close_reason`).
    func writeable(scratch: UnsafeMutablePointer<UInt8>, preamble: Int, capacity: Int) -> Int32 {
        guard let wsi else { return -1 }
        let start = scratch + preamble
        var written = 0
        while true {
            if current == nil {
                switch next() {
                case .close(let close):
                    sentClose = close
                    var reason = close.reasonBytes
                    reason.withUnsafeMutableBufferPointer { bytes in
                        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(close.code)), bytes.baseAddress, bytes.count)
                    }
                    return -1
                case .idle:
                    return 0
                case .message(let message):
                    current = message
                    currentOffset = 0
                }
            }
            guard let message = current else { return 0 }
            let total = message.payload.count
            let take = min(capacity, total - currentOffset)
            if take > 0 {
                message.payload.withUnsafeBufferPointer { bytes in
                    start.update(from: bytes.baseAddress! + currentOffset, count: take)
                }
            }
            let isFirst = currentOffset == 0
            let isLast = currentOffset + take == total
            var kind = isFirst ? (message.isBinary ? LWS_WRITE_BINARY : LWS_WRITE_TEXT) : LWS_WRITE_CONTINUATION
            if !isLast { kind = lws_write_protocol(rawValue: kind.rawValue | LWS_WRITE_NO_FIN.rawValue) }
            if lws_write(wsi, start, take, kind) < take {
                return -1
            }
            currentOffset += take
            written += take
            if isLast { current = nil }
            if lws_partial_buffered(wsi) != 0 || written >= capacity {
                lws_callback_on_writable(wsi)
                return 0
            }
        }
    }

    private enum Next {
        case message(OutboundMessage)
        case close(WebSocketClose)
        case idle
    }

    private func next() -> Next {
        let (next, waiters): (Next, [CheckedContinuation<Void, Never>]) = shared.withLock { shared in
            if let closing = shared.closing, closing.immediate || shared.queue.isEmpty {
                return (.close(closing.close), [])
            }
            guard let message = shared.queue.pop() else { return (.idle, []) }
            var waiters: [CheckedContinuation<Void, Never>] = []
            if !shared.roomWaiters.isEmpty {
                swap(&waiters, &shared.roomWaiters)
            }
            return (.message(message), waiters)
        }
        // Each waiter re-offers and waits again if its message still does not fit.
        waiters.forEach { $0.resume() }
        return next
    }

    /// A piece of a received frame. Fragments are collected until the message is complete;
    /// beyond `maxMessageBytes` the answer is `.tooBig` (the caller closes with 1009).
    func received(_ bytes: UnsafeRawBufferPointer) -> Received {
        guard let wsi else { return .incomplete }
        if !assembling {
            assembling = true
            assemblingBinary = lws_frame_is_binary(wsi) != 0
            assembly.removeAll(keepingCapacity: false)
        }
        guard assembly.count + bytes.count <= configuration.maxMessageBytes else {
            let close = WebSocketClose(code: WebSocketClose.messageTooBig,
                                       reason: "message larger than \(configuration.maxMessageBytes) bytes")
            sentClose = close
            var reason = close.reasonBytes
            reason.withUnsafeMutableBufferPointer { buffer in
                lws_close_reason(wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE, buffer.baseAddress, buffer.count)
            }
            return .tooBig
        }
        assembly.append(contentsOf: bytes)
        guard lws_is_final_fragment(wsi) != 0 else { return .incomplete }
        assembling = false
        var payload: [UInt8] = []
        swap(&payload, &assembly)
        return .message(assemblingBinary ? .binary(payload) : .text(String(decoding: payload, as: UTF8.self)))
    }

    /// `LWS_CALLBACK_WS_PEER_INITIATED_CLOSE`: the peer's close frame payload.
    func peerInitiatedClose(_ payload: UnsafeRawBufferPointer) {
        peerClose = WebSocketClose(payload: payload)
    }

    /// The wsi is closing: no more writes, senders get `.closed`, waiters wake. Returns how the
    /// connection ended: the peer's close frame, else the one sent, else 1006.
    func detach() -> WebSocketClose {
        wsi = nil
        current = nil
        let waiters = shared.withLock { shared in
            shared.closed = true
            shared.queue.removeAll()
            var waiters: [CheckedContinuation<Void, Never>] = []
            swap(&waiters, &shared.roomWaiters)
            return waiters
        }
        waiters.forEach { $0.resume() }
        return peerClose ?? sentClose ?? WebSocketClose(code: WebSocketClose.abnormal, reason: "connection lost")
    }
}
