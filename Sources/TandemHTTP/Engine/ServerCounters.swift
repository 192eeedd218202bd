import Synchronization

/// Live figures the service thread maintains and any thread may read.
final class ServerCounters: Sendable {
    private let connections = Atomic<Int>(0)
    private let requests = Atomic<Int>(0)
    private let boundPort = Atomic<Int>(0)

    /// Accepted connections not yet closed.
    var openConnections: Int { connections.load(ordering: .relaxed) }
    /// Requests whose head arrived and whose response is not completely written yet.
    var inFlightRequests: Int { requests.load(ordering: .relaxed) }
    /// The bound port once listening, else 0.
    var port: Int {
        get { boundPort.load(ordering: .relaxed) }
        set { boundPort.store(newValue, ordering: .relaxed) }
    }

    func connectionOpened() { connections.add(1, ordering: .relaxed) }
    func connectionClosed() { connections.subtract(1, ordering: .relaxed) }
    func requestStarted() { requests.add(1, ordering: .relaxed) }
    func requestEnded() { requests.subtract(1, ordering: .relaxed) }

    /// After the context is gone nothing is open or in flight.
    func reset() {
        connections.store(0, ordering: .relaxed)
        requests.store(0, ordering: .relaxed)
    }
}
