import Synchronization

/// Live figures the service thread maintains and any thread may read.
final class ServerCounters: Sendable {
    private let connections = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)
    private let boundPort = Atomic<Int>(0)
    private let webSockets = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let slowConsumers = Atomic<Int>(0)
    private let buffered = Atomic<Int>(0)
    private let peakBuffered = Atomic<Int>(0)
    private let spooled = Atomic<Int>(0)
    private let quickAdmissions = Atomic<Int>(0)
    private let workerAdmissions = Atomic<Int>(0)

    /// Accepted connections not yet closed.
    var openConnections: Int { connections.load(ordering: .relaxed) }
    /// Requests whose head arrived and whose response is not completely written yet.
    var inFlightRequests: Int { requests.load(ordering: .relaxed) }
    /// The bound port once listening, else 0.
    var port: Int {
        get { boundPort.load(ordering: .relaxed) }
        set { boundPort.store(newValue, ordering: .relaxed) }
    }

    /// WebSocket connections past their handshake and not yet closed.
    var openWebSockets: Int { webSockets.load(ordering: .relaxed) }
    /// Droppable WebSocket messages dropped because a send queue was full, since start.
    var droppedMessages: Int { dropped.load(ordering: .relaxed) }
    /// WebSocket connections closed because a reliable message did not fit, since start.
    var slowConsumerCloses: Int { slowConsumers.load(ordering: .relaxed) }

    /// Request bodies held now (see `HTTPBodyFigures`).
    var bodies: HTTPBodyFigures {
        HTTPBodyFigures(bufferedBytes: buffered.load(ordering: .relaxed), peakBufferedBytes: peakBuffered.load(ordering: .relaxed),
                        spooledBodies: spooled.load(ordering: .relaxed),
                        admissionsFromMemory: quickAdmissions.load(ordering: .relaxed),
                        admissionsByWorkers: workerAdmissions.load(ordering: .relaxed))
    }

    func admitted(fromMemory: Bool) {
        if fromMemory { quickAdmissions.add(1, ordering: .relaxed) } else { workerAdmissions.add(1, ordering: .relaxed) }
    }

    func bodyBytesHeld(_ count: Int) {
        let now = buffered.add(count, ordering: .relaxed).newValue
        var peak = peakBuffered.load(ordering: .relaxed)
        while now > peak {
            let (exchanged, original) = peakBuffered.compareExchange(expected: peak, desired: now, ordering: .relaxed)
            if exchanged { break }
            peak = original
        }
    }

    func bodyBytesReleased(_ count: Int) { buffered.subtract(count, ordering: .relaxed) }
    var bufferedBodyBytes: Int { buffered.load(ordering: .relaxed) }
    func spoolStarted() { spooled.add(1, ordering: .relaxed) }
    func spoolEnded() { spooled.subtract(1, ordering: .relaxed) }
    var spooledBodies: Int { spooled.load(ordering: .relaxed) }

    func webSocketOpened() { webSockets.add(1, ordering: .relaxed) }
    func webSocketClosed() { webSockets.subtract(1, ordering: .relaxed) }
    func messagesDropped(_ count: Int) { dropped.add(count, ordering: .relaxed) }
    func slowConsumerClosed() { slowConsumers.add(1, ordering: .relaxed) }

    func connectionOpened() { connections.add(1, ordering: .relaxed) }
    func connectionClosed() { connections.subtract(1, ordering: .relaxed) }
    func requestStarted() { requests.add(1, ordering: .relaxed) }
    func requestEnded() { requests.subtract(1, ordering: .relaxed) }

    /// After the context is gone nothing is open or in flight.
    func reset() {
        connections.store(0, ordering: .relaxed)
        requests.store(0, ordering: .relaxed)
        webSockets.store(0, ordering: .relaxed)
    }
}
