/// A message waiting to be written on a WebSocket.
struct OutboundMessage: Sendable {
    var payload: [UInt8]
    var isBinary: Bool
    var droppable: Bool
}

/// A WebSocket send queue bounded by messages and bytes, with the drop policy of DESIGN.md
/// section 3: when it is full, droppable messages give way and a message that must not be
/// dropped and still does not fit means the peer is too slow.
///
/// - A message that fits is queued.
/// - A droppable message that does not fit is dropped itself (the ones already queued are as
///   good and older in line).
/// - A reliable message that does not fit first evicts queued droppable messages, oldest
///   first, until it fits; if it still does not, the outcome is `.overflow` and the caller
///   closes the connection.
struct OutboundQueue {
    enum Outcome: Equatable {
        /// Queued; `dropped` older droppable messages were evicted to make room.
        case queued(dropped: Int)
        /// The offered droppable message was dropped.
        case droppedOffered
        /// A reliable message does not fit even without the droppable ones (which were
        /// evicted, `dropped` of them).
        case overflow(dropped: Int)
    }

    let maxMessages: Int
    let maxBytes: Int
    private var items: [OutboundMessage] = []
    /// Index of the first unsent message in `items`; the storage is compacted now and then.
    private var head = 0
    private(set) var bytes = 0

    init(maxMessages: Int, maxBytes: Int) {
        self.maxMessages = maxMessages
        self.maxBytes = maxBytes
    }

    var count: Int { items.count - head }
    var isEmpty: Bool { head == items.count }
    /// Whether one more message of `size` bytes would fit. An empty queue takes any message,
    /// so one larger than `maxBytes` goes out alone instead of never fitting.
    func hasRoom(for size: Int) -> Bool { isEmpty || (count < maxMessages && bytes + size <= maxBytes) }

    mutating func offer(_ message: OutboundMessage) -> Outcome {
        let size = message.payload.count
        if hasRoom(for: size) {
            append(message)
            return .queued(dropped: 0)
        }
        if message.droppable {
            return .droppedOffered
        }
        let dropped = evictDroppable(toFit: size)
        guard hasRoom(for: size) else { return .overflow(dropped: dropped) }
        append(message)
        return .queued(dropped: dropped)
    }

    mutating func pop() -> OutboundMessage? {
        guard head < items.count else { return nil }
        let message = items[head]
        items[head].payload = []
        head += 1
        bytes -= message.payload.count
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return message
    }

    mutating func removeAll() {
        items.removeAll()
        head = 0
        bytes = 0
    }

    private mutating func append(_ message: OutboundMessage) {
        items.append(message)
        bytes += message.payload.count
    }

    /// Removes droppable messages, oldest first, until `size` more bytes would fit; how many.
    private mutating func evictDroppable(toFit size: Int) -> Int {
        var kept: [OutboundMessage] = []
        kept.reserveCapacity(count)
        var dropped = 0
        var remainingCount = count
        var remainingBytes = bytes
        for message in items[head...] {
            let fits = remainingCount < maxMessages && remainingBytes + size <= maxBytes
            if message.droppable && !fits {
                dropped += 1
                remainingCount -= 1
                remainingBytes -= message.payload.count
            } else {
                kept.append(message)
            }
        }
        items = kept
        head = 0
        bytes = remainingBytes
        return dropped
    }
}
