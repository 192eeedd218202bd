/// What carries the bus's events between nodes (DESIGN.md §5; decisions N1): bytes on subjects.
/// The server encodes and decodes the events; a transport only moves them, so the server names
/// no messaging system (the `tandem` command builds the NATS one for `--bus nats://…`, as it
/// opens the store: decisions P1).
///
/// Without a transport the bus is in-process only: one node, today's behaviour.
public protocol BusTransport: Sendable {
    /// One line for the start message, e.g. `nats://127.0.0.1:4222`.
    var summary: String { get }

    /// Starts receiving every subject under `prefix` (`tandem.1.` and more tokens).
    ///
    /// - `receive`: one message's payload, called on the transport's own thread, in the order
    ///   one publisher sent them; the callee must hand the work off and return.
    /// - `missed`: events may have been lost (the connection to the bus was down and came back,
    ///   or this node could not keep up); called on the transport's thread.
    /// - Throws: when the bus cannot be reached at start (a bad address stops `tandem serve`).
    func start(prefix: String, receive: @escaping @Sendable (_ payload: [UInt8]) -> Void,
               missed: @escaping @Sendable (_ reason: String) -> Void) throws

    /// Sends one message for `subject`, or buffers it while the bus is down (up to the
    /// transport's limit). May block while the bus server stops reading (libnats writes on the
    /// caller's thread without a deadline): the bus calls it from its own outbox thread only
    /// (decisions N27). Returns false when it was dropped.
    func publish(subject: String, payload: [UInt8]) -> Bool

    /// Whether the transport is connected to the bus now (`/healthz`'s `bus.state`; decisions
    /// N16). A transport that cannot tell says true (the default).
    var isConnected: Bool { get }
    /// The largest payload the transport carries, in bytes (NATS: the server's `max_payload`,
    /// 1 MiB by default); a larger event is replaced by a marker (decisions N30).
    var maxPayload: Int { get }

    /// Stops receiving and closes the connection (sends what is buffered first, briefly).
    func close()
}

extension BusTransport {
    /// A transport that cannot tell is taken as connected.
    public var isConnected: Bool { true }
}
