import Foundation
internal import TandemCore
internal import TandemHTTP

/// Envelopes of chosen types from the stream WebSocket `/stream/1/{container}/{environment}`:
/// one connection per stream, reopened with exponential backoff (`Configuration.streamReconnection`,
/// reset once the server greets the new connection) until cancelled; finishes by throwing
/// `notAuthenticated` when the server refuses the credentials (close code 4401), and
/// `internalError` when the process's WebSocket client loop has stopped (no stream can be
/// opened in this process any more; retrying would only spin). `greeting`
/// envelopes are sent after each `hello` (subscriptions), then `onConnected` runs; both happen
/// again on a `resync` envelope (the server may have missed events from other nodes, N43).
/// Push notifications, highlights, conversation events and prompts all read the stream this way.
struct StreamEnvelopes: Sendable {
    let transport: Transport
    let types: Set<String>
    var greeting: [JSONValue] = []
    /// Called each time the server greets a (re)connected stream, and on each `resync`.
    var onConnected: (@Sendable () -> Void)? = nil
    /// When set, the greeting is sent again this often (seconds) while the connection lasts:
    /// for subscriptions the server ends unless renewed (collaboration presence, R29).
    var renewal: Double? = nil

    /// Envelopes decoded by `decode` (nil skips one).
    func stream<Element: Sendable>(_ decode: @escaping @Sendable (JSONValue) -> Element?) -> AsyncThrowingStream<Element, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Element.self)
        let task = Task { [self] in await run(continuation, decode) }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    /// Connects, reads, and reconnects until cancelled or refused; yields what `decode` makes of
    /// each envelope of `types`.
    func run<Element: Sendable>(_ continuation: AsyncThrowingStream<Element, any Error>.Continuation,
                                _ decode: @escaping @Sendable (JSONValue) -> Element?) async {
        let policy = transport.configuration.streamReconnection
        var failures = 0
        while !Task.isCancelled {
            do {
                let client = try await WebSocketClient.connect(to: Notifications.streamURL(transport), headers: transport.authorizationHeaders)
                let close = await withTaskCancellationHandler {
                    await read(client, continuation, decode) { failures = 0; onConnected?() }
                } onCancel: {
                    client.close()
                }
                if close?.code == 4401 {
                    continuation.finish(throwing: TandemError(.notAuthenticated, "the stream refused the credentials: \(close!.reason)"))
                    return
                }
            } catch {
                let failure = TandemError.streamConnect(error)
                if failure.code == .internalError {
                    continuation.finish(throwing: failure)
                    return
                }
                // Connection refused or timed out: wait and retry below.
            }
            if Task.isCancelled { break }
            let delay = policy.delay(beforeRetry: failures, after: TandemError(.networkFailure, "stream closed"))
            failures += 1
            do { try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000)) } catch { break }
        }
        continuation.finish()
    }

    private func read<Element: Sendable>(_ client: WebSocketClient, _ continuation: AsyncThrowingStream<Element, any Error>.Continuation,
                                         _ decode: (JSONValue) -> Element?, greeted: () -> Void) async -> WebSocketClose? {
        var renewing: Task<Void, Never>?
        defer { renewing?.cancel() }
        for await event in client.events {
            switch event {
            case .message(.text(let text)):
                guard let envelope = try? JSONParser.parse(text), let type = envelope["type"]?.stringValue else { continue }
                if type == "hello" {
                    for message in greeting { _ = await client.send(text: JSONWriter.string(message)) }
                    if let renewal, renewing == nil {
                        let greeting = self.greeting
                        renewing = Task {
                            while (try? await Task.sleep(nanoseconds: UInt64(renewal * 1_000_000_000))) != nil {
                                for message in greeting { _ = await client.send(text: JSONWriter.string(message)) }
                            }
                        }
                    }
                    greeted()
                } else if type == "resync" {
                    // The server may have missed events from its other nodes (decisions N43): catch
                    // up as after a reconnection, without reconnecting. The greeting again brings
                    // fresh snapshots (highlights); `onConnected` fetches from change tokens.
                    for message in greeting { _ = await client.send(text: JSONWriter.string(message)) }
                    onConnected?()
                } else if types.contains(type), let element = decode(envelope) {
                    continuation.yield(element)
                }
            case .message(.binary): continue
            case .closed(let close): return close
            }
        }
        return nil
    }
}

extension Date {
    /// Milliseconds since 1970 (the wire's dates).
    init(milliseconds: Int64) { self.init(timeIntervalSince1970: Double(milliseconds) / 1000) }
}
