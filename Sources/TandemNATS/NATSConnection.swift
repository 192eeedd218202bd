internal import CNATS
import Foundation
import Synchronization
import TandemCore

/// A failure libnats reported: its status name and text (`natsStatus_GetText`, with the
/// library's last error detail when it has one).
public struct NATSError: Error, CustomStringConvertible, Sendable {
    public let description: String

    init(_ status: natsStatus, _ action: String) {
        let text = natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)"
        let detail = nats_GetLastError(nil).map { String(cString: $0) } ?? ""
        description = "NATS \(action): \(text)" + (detail.isEmpty || detail.contains(text) ? "" : " (\(detail))")
    }

    init(_ message: String) { description = message }
}

/// One connection to a NATS server or cluster (libnats, Debian's `libnats-dev`), with at most
/// one subscription: what the bus between Tandem nodes needs (issue 20; decisions N9).
///
/// ```swift
/// let nats = try NATSConnection(servers: ["nats://127.0.0.1:4222"], name: "tandem") { event in … }
/// try nats.subscribe("tandem.1.>") { payload in … }
/// _ = nats.publish("tandem.1.cluster", payload)
/// ```
///
/// Reconnects by itself, forever, every `reconnectWaitMilliseconds` (libnats tries each server
/// of the list in turn); while disconnected, published messages are kept in libnats'
/// reconnect buffer (`bufferBytes`) and sent on reconnect, and `publish` returns false once it
/// is full. This connection's own messages are not delivered back to it (`NoEcho`).
/// Callbacks run on libnats' threads: `events` and the subscription's handler must hand their
/// work off and return.
///
/// `@unchecked Sendable`: libnats' connection is thread-safe (its documentation: a connection
/// may be shared by threads); the subscription's pointer is kept in a `Mutex`.
public final class NATSConnection: @unchecked Sendable {
    /// What happened to the connection, told to `events` on a libnats thread.
    public enum Event: Sendable {
        case disconnected
        /// Connected again after `disconnected`: messages published meanwhile by others are lost.
        case reconnected(url: String)
        /// This connection could not keep up: messages for the subscription were dropped.
        case slowConsumer
        case error(String)
    }

    /// What libnats' callbacks reach: retained for the life of the process (libnats may call
    /// back until its threads end, after `close`), one per connection.
    final class Callbacks: Sendable {
        let events: @Sendable (Event) -> Void
        /// The subscription's handler, in a class: a closure kept directly in a `Mutex` is
        /// wrapped in two more reabstraction thunks by every `withLock { $0 }` (Swift 6.3,
        /// optimized builds), so each message took longer than the last (decisions N51).
        let message = Locked<MessageHandler?>(nil)
        /// Connected, as libnats' disconnected and reconnected callbacks last said: read without
        /// the connection's lock, which a publish stuck on a server that stopped reading holds.
        let linked = Atomic<Bool>(true)
        init(events: @escaping @Sendable (Event) -> Void) { self.events = events }
    }

    /// A subscription's handler (see `Callbacks.message`).
    final class MessageHandler: Sendable {
        let call: @Sendable ([UInt8]) -> Void
        init(_ call: @escaping @Sendable ([UInt8]) -> Void) { self.call = call }
    }

    private let connection: OpaquePointer
    /// The subscription's `natsSubscription *` as a bit pattern (0: none), so that it can live in a `Mutex`.
    private let subscription = Locked<Int>(0)
    private let callbacks: Callbacks
    private let closed = Atomic<Bool>(false)

    /// The URLs given (`nats://host:port` or `tls://host:port`, several for a cluster).
    public let servers: [String]

    /// How the connection proves who it is and whom it talks to (decisions N29).
    public struct Security: Sendable {
        /// PEM file of the certificate authorities the server's TLS certificate must chain to;
        /// given, TLS is required (as it is for `tls://` URLs, with the system's authorities).
        public var caFile: String?
        /// A NATS `.creds` file (user JWT and NKey seed) the connection signs in with.
        public var credentialsFile: String?

        public init(caFile: String? = nil, credentialsFile: String? = nil) {
            self.caFile = caFile
            self.credentialsFile = credentialsFile
        }
    }

    /// Connects to the first reachable server of `servers`. `shownAs`: how the servers are named
    /// in errors (without passwords: the caller redacts them); the URLs as given when nil.
    /// - Throws: `NATSError` when none can be reached now (a wrong address is an error at start;
    ///   only a connection made once is retried forever), or a security file cannot be loaded.
    public init(servers: [String], shownAs: String? = nil, name: String, security: Security = Security(),
                reconnectWaitMilliseconds: Int64 = 250, bufferBytes: Int32 = 8 << 20,
                events: @escaping @Sendable (Event) -> Void) throws {
        guard !servers.isEmpty else { throw NATSError("NATS: no server URL") }
        self.servers = servers
        callbacks = Callbacks(events: events)
        var options: OpaquePointer?
        var status = natsOptions_Create(&options)
        guard status == NATS_OK, let options else { throw NATSError(status, "options") }
        defer { natsOptions_Destroy(options) }
        let closure = Unmanaged.passRetained(callbacks).toOpaque()
        let urls = servers.map { strdup($0) }
        defer { urls.forEach { free($0) } }
        var pointers = urls.map { UnsafePointer<CChar>($0) }
        for step in [
            { natsOptions_SetServers(options, &pointers, Int32(pointers.count)) },
            { natsOptions_SetName(options, name) },
            { natsOptions_SetMaxReconnect(options, -1) },
            { natsOptions_SetReconnectWait(options, reconnectWaitMilliseconds) },
            { natsOptions_SetReconnectBufSize(options, bufferBytes) },
            { natsOptions_SetNoEcho(options, true) },
            // A dead server with no RST (a cable, a frozen host) is noticed within ~10 s.
            { natsOptions_SetPingInterval(options, 5_000) },
            { natsOptions_SetTimeout(options, 2_000) },
            { natsOptions_SetDisconnectedCB(options, NATSConnection.onDisconnected, closure) },
            { natsOptions_SetReconnectedCB(options, NATSConnection.onReconnected, closure) },
            { natsOptions_SetErrorHandler(options, NATSConnection.onError, closure) },
        ] as [() -> natsStatus] {
            status = step()
            guard status == NATS_OK else { throw NATSError(status, "options") }
        }
        if servers.contains(where: { $0.lowercased().hasPrefix("tls://") }) || security.caFile != nil {
            status = natsOptions_SetSecure(options, true)
            guard status == NATS_OK else { throw NATSError(status, "TLS") }
        }
        if let caFile = security.caFile {
            status = natsOptions_LoadCATrustedCertificates(options, caFile)
            guard status == NATS_OK else { throw NATSError(status, "CA certificates \(caFile)") }
        }
        if let credentialsFile = security.credentialsFile {
            status = natsOptions_SetUserCredentialsFromFiles(options, credentialsFile, nil)
            guard status == NATS_OK else { throw NATSError(status, "credentials \(credentialsFile)") }
        }
        var connection: OpaquePointer?
        status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK, let connection else {
            throw NATSError(status, "connect to \(shownAs ?? servers.joined(separator: ","))")
        }
        self.connection = connection
        maxPayload = Int(natsConnection_GetMaxPayload(connection))
    }

    /// Subscribes to `subject` (wildcards allowed); `handler` gets each message's payload on a
    /// libnats thread, in the order the server sent them. At most `pendingMessages` wait for the
    /// handler; past that, messages are dropped and `events` hears `.slowConsumer`.
    /// - Throws: `NATSError`.
    public func subscribe(_ subject: String, pendingMessages: Int32 = 65_536, pendingBytes: Int32 = 64 << 20,
                          handler: @escaping @Sendable ([UInt8]) -> Void) throws {
        callbacks.message.withLock { $0 = MessageHandler(handler) }
        var created: OpaquePointer?
        let closure = Unmanaged.passUnretained(callbacks).toOpaque()
        var status = natsConnection_Subscribe(&created, connection, subject, NATSConnection.onMessage, closure)
        guard status == NATS_OK, let created else { throw NATSError(status, "subscribe to \(subject)") }
        status = natsSubscription_SetPendingLimits(created, pendingMessages, pendingBytes)
        guard status == NATS_OK else { throw NATSError(status, "pending limits") }
        subscription.withLock { $0 = Int(bitPattern: created) }
        // The subscription is known to the server once this round trip is done.
        status = natsConnection_FlushTimeout(connection, 5_000)
        guard status == NATS_OK else { throw NATSError(status, "flush") }
    }

    /// Queues `payload` for `subject`; libnats' flusher sends it, but a payload that overflows
    /// libnats' buffer is written here, on the caller's thread, with no deadline: this blocks
    /// while the server stops reading (callers that must not block hand it to a thread of their
    /// own: decisions N27). False when it was refused (the connection is closed, the reconnect
    /// buffer is full while disconnected, or the payload is over `maxPayload`).
    public func publish(_ subject: String, _ payload: [UInt8]) -> Bool {
        guard !closed.load(ordering: .relaxed) else { return false }
        let status = payload.withUnsafeBytes { natsConnection_Publish(connection, subject, $0.baseAddress, Int32($0.count)) }
        return status == NATS_OK
    }

    /// Whether the connection is up now (false while libnats reconnects, and after `close`).
    public var isConnected: Bool {
        !closed.load(ordering: .relaxed) && callbacks.linked.load(ordering: .relaxed)
    }
    /// The largest payload the server accepts, in bytes (its `max_payload`, told at connect).
    /// Read once then: libnats' getter takes the connection's lock, which a publish stuck on a
    /// server that stopped reading holds (decisions N27).
    public let maxPayload: Int

    /// Sends what is buffered (for up to `flushMilliseconds` while connected), unsubscribes and
    /// closes; `publish` returns false from then on. Idempotent. The C objects are freed in
    /// `deinit`, when no thread can be publishing any more.
    public func close(flushMilliseconds: Int64 = 1_000) {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        if natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED {
            _ = natsConnection_FlushTimeout(connection, flushMilliseconds)
        }
        if let subscription = OpaquePointer(bitPattern: subscription.withLock({ $0 })) {
            _ = natsSubscription_Unsubscribe(subscription)
        }
        natsConnection_Close(connection)
    }

    deinit {
        close()
        if let subscription = OpaquePointer(bitPattern: subscription.withLock({ $0 })) { natsSubscription_Destroy(subscription) }
        natsConnection_Destroy(connection)
    }

    // MARK: libnats callbacks (libnats threads)

    private static func callbacks(_ closure: UnsafeMutableRawPointer?) -> Callbacks? {
        closure.map { Unmanaged<Callbacks>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let onMessage: natsMsgHandler = { _, _, message, closure in
        guard let message else { return }
        let length = Int(natsMsg_GetDataLength(message))
        var bytes = [UInt8](repeating: 0, count: length)
        if length > 0, let data = natsMsg_GetData(message) {
            bytes.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: data, count: length)) }
        }
        natsMsg_Destroy(message)
        NATSConnection.callbacks(closure)?.message.withLock { $0 }?.call(bytes)
    }

    private static let onDisconnected: natsConnectionHandler = { _, closure in
        guard let callbacks = NATSConnection.callbacks(closure) else { return }
        callbacks.linked.store(false, ordering: .relaxed)
        callbacks.events(.disconnected)
    }

    private static let onReconnected: natsConnectionHandler = { connection, closure in
        var buffer = [CChar](repeating: 0, count: 256)
        let url = natsConnection_GetConnectedUrl(connection, &buffer, buffer.count) == NATS_OK
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
        // libnats gives the URL as configured, user and password included: it reaches logs.
        guard let callbacks = NATSConnection.callbacks(closure) else { return }
        callbacks.linked.store(true, ordering: .relaxed)
        callbacks.events(.reconnected(url: RedactedURL.userPart(url, aloneIsSecret: true, untilLastAt: true)))
    }

    private static let onError: natsErrHandler = { _, _, status, closure in
        let event: Event = status == NATS_SLOW_CONSUMER ? .slowConsumer
            : .error(natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)")
        NATSConnection.callbacks(closure)?.events(event)
    }
}
