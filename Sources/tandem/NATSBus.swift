import Foundation
import TandemNATS
import TandemServer

/// The bus between nodes over NATS (`tandem serve --bus nats://host:4222[,more]`; decisions
/// N1, N9): the server's `BusTransport` over one `NATSConnection`.
final class NATSBus: BusTransport {
    private let servers: [String]
    private let connection = LockedConnection()

    /// One slot for the connection made by `start`.
    private final class LockedConnection: @unchecked Sendable {
        private let lock = NSLock()
        private var value: NATSConnection?
        func set(_ connection: NATSConnection) { lock.withLock { value = connection } }
        func get() -> NATSConnection? { lock.withLock { value } }
    }

    /// `value`: comma-separated `nats://host:port` URLs of one NATS cluster.
    /// - Throws: `UsageError` when it names none, or one that is not `nats://`.
    init(_ value: String) throws {
        servers = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !servers.isEmpty else { throw UsageError("--bus takes nats://HOST:PORT URLs, comma-separated") }
        for url in servers where !url.hasPrefix("nats://") || url.count <= "nats://".count {
            throw UsageError("--bus takes nats://HOST:PORT URLs, comma-separated (\"\(url)\" is not one)")
        }
    }

    var summary: String { servers.joined(separator: ",") }

    /// The bus could not be reached at start: `tandem serve` exits 1 with one line.
    struct Unreachable: Error, CustomStringConvertible {
        var description: String
    }

    func start(prefix: String, receive: @escaping @Sendable ([UInt8]) -> Void, missed: @escaping @Sendable (String) -> Void) throws {
        do {
            try connect(prefix: prefix, receive: receive, missed: missed)
        } catch let error as NATSError {
            throw Unreachable(description: "the bus cannot be reached: \(error)")
        }
    }

    private func connect(prefix: String, receive: @escaping @Sendable ([UInt8]) -> Void, missed: @escaping @Sendable (String) -> Void) throws {
        let nats = try NATSConnection(servers: servers, name: "tandem") { event in
            switch event {
            case .disconnected: break
            case .reconnected(let url): missed("reconnected to \(url)")
            case .slowConsumer: missed("this node fell behind the bus")
            case .error(let text): missed("bus error: \(text)")
            }
        }
        try nats.subscribe(prefix + ">", handler: receive)
        connection.set(nats)
    }

    func publish(subject: String, payload: [UInt8]) -> Bool {
        connection.get()?.publish(subject, payload) ?? false
    }

    var isConnected: Bool { connection.get()?.isConnected ?? false }

    func close() { connection.get()?.close() }
}
