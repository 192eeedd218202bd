public import Foundation
internal import TandemCore

/// Lets an app name its message type on the wire (SharePlay: `CustomMessageIdentifiable`), so
/// different types or versions can read the same messages.
public protocol CustomMessageIdentifiable {
    static var messageIdentifier: String { get }
}

/// Real-time messages between a session's participants (SharePlay: `GroupSessionMessenger`),
/// as binary frames on the stream WebSocket tagged with a message type identifier.
///
/// ```swift
/// let strokes = GroupSessionMessenger(session: session, deliveryMode: .unreliable)
/// try await strokes.send(Stroke(x: 3, y: 4))
/// for await (stroke, context) in strokes.messages(of: Stroke.self) { draw(stroke, from: context.source) }
/// ```
///
/// - Reliable (default): one order per session for everyone, at most once (D31); `send`
///   returns once the server has queued it to every receiver.
/// - Unreliable: may be dropped (first when a receiver's queue is full), never reordered per
///   sender; `send` returns once written to the local socket queue. A refusal by the server
///   (rate limit) is thrown by the next send.
/// - Never delivered back to the sender (D30). 256 KiB per message (D32, `messageTooLarge`);
///   a per-participant rate limit (G6, `requestRateLimited`).
/// - The type identifier is `CustomMessageIdentifiable.messageIdentifier` or the type's name;
///   `Data` travels raw under `"Data"`. Values are JSON-encoded.
/// - Messages are only delivered to sequences already iterating `messages(of:)`; past traffic
///   is never replayed (D36).
public final class GroupSessionMessenger: Sendable {
    /// SharePlay: `GroupSessionMessenger.DeliveryMode`.
    public enum DeliveryMode: Sendable, Hashable {
        case reliable, unreliable
    }

    /// SharePlay: `GroupSessionMessenger.MessageContext`.
    public struct MessageContext: Sendable {
        public var source: Participant
        /// The server's order for reliable messages (increasing per session); 0 for unreliable ones.
        public var sequence: UInt64
    }

    public let deliveryMode: DeliveryMode
    let core: SessionCore

    public init<Activity>(session: GroupSession<Activity>, deliveryMode: DeliveryMode = .reliable) {
        core = session.core
        self.deliveryMode = deliveryMode
    }

    static func typeIdentifier<T>(_ type: T.Type) -> String {
        if T.self == Data.self { return "Data" }
        if let custom = type as? any CustomMessageIdentifiable.Type { return custom.messageIdentifier }
        return String(describing: type)
    }

    /// Sends a value to `participants` (default: all others).
    /// - Throws: `messageTooLarge` over 256 KiB, `requestRateLimited` past the rate limit,
    ///   `invalidArguments` before `join()`, `networkFailure` when the stream drops;
    ///   `serviceUnavailable` on a server of several nodes when the node this client is connected
    ///   to cannot reach the node that runs the session (nothing was sent: retry after
    ///   `retryAfterSeconds`), or got no answer from it within 5 s (the message may or may not
    ///   have been delivered; server decisions N68, N75).
    public func send<Message: Encodable & Sendable>(_ value: Message, to participants: Participants = .all) async throws(TandemError) {
        let data: Data
        do { data = try JSONEncoder().encode(value) } catch { throw TandemError(.invalidArguments, "cannot encode the message: \(error)") }
        try await core.send(type: Self.typeIdentifier(Message.self), payload: [UInt8](data), to: participants,
                            reliable: deliveryMode == .reliable)
    }

    /// Sends raw bytes (received by `messages(of: Data.self)`).
    public func send(_ data: Data, to participants: Participants = .all) async throws(TandemError) {
        try await core.send(type: "Data", payload: [UInt8](data), to: participants, reliable: deliveryMode == .reliable)
    }

    /// Messages of one type with their context, in arrival order; ends when the session is
    /// invalidated. Messages that do not decode as `Message` are skipped.
    public func messages<Message: Decodable & Sendable>(of type: Message.Type) -> AsyncStream<(Message, MessageContext)> {
        let source = core.subscribe(type: Self.typeIdentifier(type))
        return AsyncStream { continuation in
            let task = Task {
                for await delivery in source {
                    let context = MessageContext(source: Participant(id: delivery.source), sequence: delivery.sequence)
                    if Message.self == Data.self {
                        continuation.yield((Data(delivery.payload) as! Message, context))
                    } else if let value = try? JSONDecoder().decode(Message.self, from: Data(delivery.payload)) {
                        continuation.yield((value, context))
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
