import Foundation
import CWebSockets

/// One `WebSocketClient` connection as the client service thread sees it.
///
/// Created on the caller's thread and handed to `ClientLoop`, which owns it from then on (its
/// `connections`, keyed by the never-reused channel id, and the wsi's opaque user data) until
/// lws destroys the wsi.
final class ClientConnection: @unchecked Sendable {
    struct Target {
        var host: String
        var port: Int
        /// Path and query.
        var path: String
        var headers: [(String, String)]
        /// The address to connect from (lws' `iface`), nil: any.
        var localAddress: String? = nil
    }

    let target: Target
    let channel: WebSocketChannel
    let events: AsyncStream<WebSocketClient.Event>.Continuation
    /// Resumed once: when the handshake completes or fails.
    private var established: CheckedContinuation<Void, any Error>?
    private var finished = false
    /// C strings and the keep-alive policy lws reads while connecting and for the connection's life.
    private var cStrings: [UnsafeMutablePointer<CChar>] = []
    let idlePolicy: UnsafeMutablePointer<lws_retry_bo_t>

    init(target: Target, channel: WebSocketChannel, events: AsyncStream<WebSocketClient.Event>.Continuation,
         established: CheckedContinuation<Void, any Error>) {
        self.target = target
        self.channel = channel
        self.events = events
        self.established = established
        idlePolicy = .allocate(capacity: 1)
        idlePolicy.initialize(to: lws_retry_bo_t.idle(channel.configuration))
    }

    deinit {
        cStrings.forEach { free($0) }
        idlePolicy.deallocate()
    }

    /// A C copy of `string` that lives as long as this connection.
    func cString(_ string: String) -> UnsafePointer<CChar> {
        let copy = strdup(string)!
        cStrings.append(copy)
        return UnsafePointer(copy)
    }

    /// `LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER`: adds `target.headers` at `*cursor`.
    func appendHeaders(_ wsi: OpaquePointer, cursor: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                       remaining: Int) -> Int32 {
        guard let start = cursor.pointee else { return -1 }
        let end = start + remaining
        for (name, value) in target.headers {
            let field = Array("\(name.lowercased()):".utf8CString)
            let bytes = Array(value.utf8)
            guard !bytes.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { continue }
            let result = field.withUnsafeBufferPointer { fieldPointer in
                bytes.withUnsafeBufferPointer { valuePointer in
                    fieldPointer.baseAddress!.withMemoryRebound(to: UInt8.self, capacity: field.count) { name in
                        lws_add_http_header_by_name(wsi, name, valuePointer.baseAddress ?? name,
                                                    Int32(bytes.count), cursor, end)
                    }
                }
            }
            if result != 0 { return -1 }
        }
        return 0
    }

    /// The handshake completed.
    func didEstablish(_ wsi: OpaquePointer) {
        channel.attach(wsi)
        established?.resume()
        established = nil
    }

    /// The connection is over (`CLIENT_CLOSED`, a connection error, or the wsi destroyed):
    /// fails a pending `connect`, or ends `events` with the close. Idempotent.
    func finish(connectError: String?) {
        finish(failure: WebSocketError(code: .connectFailed, reason: connectError ?? "connection closed during the handshake",
                                       url: url), close: nil)
    }

    /// The client service loop has stopped (`ClientLoop`): a pending `connect` throws
    /// `.clientStopped`; an open connection ends with 1006 and `reason`. Idempotent.
    func finish(loopStopped reason: String) {
        let text = "the WebSocket client loop of this process has stopped (\(reason))"
        finish(failure: WebSocketError(code: .clientStopped, reason: text, url: url),
               close: WebSocketClose(code: WebSocketClose.abnormal, reason: text))
    }

    private var url: String { "ws://\(target.host):\(target.port)\(target.path)" }

    private func finish(failure: WebSocketError, close override: WebSocketClose?) {
        guard !finished else { return }
        finished = true
        let close = channel.detach()
        if let established {
            self.established = nil
            established.resume(throwing: failure)
            events.finish()
            return
        }
        events.yield(.closed(override ?? close))
        events.finish()
    }
}
