import Foundation
import TandemCore
import TandemNATS
import TandemServer

/// The bus between nodes over NATS (`tandem serve --bus nats://host:4222[,more]`; decisions
/// N1, N9): the server's `BusTransport` over one `NATSConnection`. `tls://` URLs, `--bus-ca`
/// and `--bus-credentials` secure it (N29); a URL's password or token is never shown.
final class NATSBus: BusTransport {
    private let servers: [String]
    private let security: NATSConnection.Security
    private let connection = LockedConnection()

    /// One slot for the connection made by `start`.
    private final class LockedConnection: @unchecked Sendable {
        private let lock = NSLock()
        private var value: NATSConnection?
        func set(_ connection: NATSConnection) { lock.withLock { value = connection } }
        func get() -> NATSConnection? { lock.withLock { value } }
    }

    /// `value`: comma-separated `nats://host:port` (or `tls://`) URLs of one NATS cluster.
    /// - Throws: `UsageError` when it names none, or one that is not `nats://` or `tls://`.
    init(_ value: String, security: NATSConnection.Security = .init()) throws {
        // The scheme in any letter case, as for --store (P60); libnats compares it as written.
        servers = value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.map { url in
            guard let end = url.firstRange(of: "://") else { return url }
            return url[..<end.lowerBound].lowercased() + url[end.lowerBound...]
        }
        self.security = security
        guard !servers.isEmpty else { throw UsageError("--bus takes nats://HOST:PORT URLs, comma-separated") }
        for url in servers {
            guard let scheme = ["nats://", "tls://"].first(where: url.hasPrefix), url.count > scheme.count else {
                throw UsageError("--bus takes nats://HOST:PORT URLs, comma-separated (\"\(Self.redacted(url))\" is not one)")
            }
            // A port out of range is refused here, not reported later as "no server available" (N61).
            let authority = url.dropFirst(scheme.count).prefix { $0 != "/" }.split(separator: "@").last ?? ""
            if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
                let port = authority[authority.index(after: colon)...]
                guard let number = Int(port), (1...65_535).contains(number) else {
                    throw UsageError("--bus: \"\(Self.redacted(url))\" has no valid port (1-65535)")
                }
            }
        }
    }

    /// `url` without its password or token (`RedactedURL`, the store's redaction too).
    static func redacted(_ url: String) -> String { RedactedURL.userPart(url, aloneIsSecret: true, untilLastAt: true) }

    var summary: String { servers.map(Self.redacted).joined(separator: ",") }

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
        let nats = try NATSConnection(servers: servers, shownAs: summary, name: "tandem", security: security) { event in
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
    /// The connected server's `max_payload` (1 MiB unless configured); before `start`, 1 MiB.
    var maxPayload: Int { connection.get()?.maxPayload ?? (1 << 20) }

    func close() { connection.get()?.close() }
}
