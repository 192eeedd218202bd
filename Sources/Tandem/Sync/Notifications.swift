import Foundation
internal import TandemCore
internal import TandemHTTP

/// Push notifications as an `AsyncSequence`, over the stream WebSocket
/// `/stream/1/{container}/{environment}` (decisions S10, S11).
///
/// ```swift
/// for try await notification in container.notifications {
///     let changes = try await container.privateDatabase.databaseChanges(since: token)
///     ...
/// }
/// ```
///
/// - Each iteration opens its own connection (with `deviceID` and `notifyOwnChanges` from the
///   container's configuration) and closes it when the loop ends or its task is cancelled.
/// - A dropped connection is reopened with exponential backoff
///   (`Configuration.streamReconnection`), reset once the server greets the new connection.
///   Notifications sent while disconnected are not replayed — they are hints: catch up with the
///   change feeds and their tokens after a reconnect, as CloudKit apps do after missed pushes.
///   A server with several nodes may also have missed pushes while its bus reconnected; it
///   then sends `resync` on the stream, which this sequence does not yield: `SyncEngine` and
///   `HighlightCenter.highlightUpdates` catch up by themselves on it (decisions N43).
/// - The sequence ends by throwing `notAuthenticated` when the server refuses the credentials
///   (close code 4401), and `internalError` when the process's WebSocket client loop has
///   stopped (a libwebsockets failure: no stream can be opened in this process any more, so
///   every iteration, running or later, ends with it); other failures are retried for as long
///   as the sequence is iterated.
public struct Notifications: AsyncSequence, Sendable {
    public typealias Element = PushNotification
    let transport: Transport
    /// Called each time the server greets a (re)connected stream, and when it says `resync`
    /// (it may have missed other nodes' events, N43); the sync engine catches up then.
    var onConnected: (@Sendable () -> Void)? = nil

    /// Opens a new stream connection for this iteration; it closes when the iterator is dropped
    /// or its task is cancelled.
    public func makeAsyncIterator() -> AsyncThrowingStream<PushNotification, any Error>.Iterator {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: PushNotification.self)
        let task = Task { [transport, onConnected] in await Self.run(transport, continuation, onConnected: onConnected) }
        continuation.onTermination = { _ in task.cancel() }
        return stream.makeAsyncIterator()
    }

    static func streamURL(_ transport: Transport) -> URL {
        var components = URLComponents(url: transport.serverURL, resolvingAgainstBaseURL: false)!
        components.scheme = components.scheme == "https" ? "wss" : "ws"
        components.path = "/stream/1/\(transport.containerIdentifier)/\(transport.environment.rawValue)"
        var items: [URLQueryItem] = []
        if case .apiToken(let api, let web) = transport.credentials {
            items.append(URLQueryItem(name: "ckAPIToken", value: api))
            if let web { items.append(URLQueryItem(name: "ckWebAuthToken", value: web)) }
        }
        if let device = transport.configuration.deviceID {
            items.append(URLQueryItem(name: "deviceID", value: device))
            if !transport.configuration.notifyOwnChanges { items.append(URLQueryItem(name: "notifyOwnChanges", value: "false")) }
        }
        components.queryItems = items.isEmpty ? nil : items
        return components.url!
    }

    /// Connects, reads, and reconnects until cancelled or refused (`StreamEnvelopes`).
    static func run(_ transport: Transport, _ continuation: AsyncThrowingStream<PushNotification, any Error>.Continuation,
                    onConnected: (@Sendable () -> Void)? = nil) async {
        await StreamEnvelopes(transport: transport, types: ["notification"], onConnected: onConnected)
            .run(continuation) { $0["notification"].flatMap(PushNotification.init(json:)) }
    }
}

extension Container {
    /// The signed-in user's push notifications (`CKContainer` + APNs in CloudKit); see `Notifications`.
    public var notifications: Notifications { Notifications(transport: transport) }
}
