import CWebSockets
import Foundation
import Synchronization
import TandemCore

/// The protocol callback lws calls for every event, always on the service thread.
///
/// A plain top-level function (lws stores a C function pointer); the `ServiceLoop` travels as
/// the context's user pointer, unretained: `HTTPServer` keeps it alive until the context is
/// destroyed.
func serviceCallback(_ wsi: OpaquePointer?, _ reason: lws_callback_reasons, _ user: UnsafeMutableRawPointer?,
                     _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let box = lws_context_user(context) else { return 0 }
    let loop = Unmanaged<ServiceLoop>.fromOpaque(box).takeUnretainedValue()
    switch reason {
    case LWS_CALLBACK_HTTP:
        return loop.requestHeadArrived(wsi)
    case LWS_CALLBACK_HTTP_BODY:
        return loop.bodyArrived(wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        return loop.bodyCompleted(wsi)
    case LWS_CALLBACK_HTTP_WRITEABLE:
        return loop.writeable(wsi)
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        loop.serviceWoken()
        return 0
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        // Accepted, before lws makes a connection of it: non-zero closes it at once.
        return loop.connectionArriving(descriptor: Int32(truncatingIfNeeded: Int(bitPattern: input)))
    case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
        return loop.connectionOpened(wsi)
    case LWS_CALLBACK_WSI_DESTROY:
        loop.connectionDestroyed(wsi)
        return 0
    case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
        // WebSocket upgrades go to the WebSocketResponder, if any; h2c is not served.
        return loop.confirmUpgrade(wsi, protocolName: input)
    case LWS_CALLBACK_ESTABLISHED:
        return loop.webSocketEstablished(wsi)
    case LWS_CALLBACK_RECEIVE:
        return loop.webSocketReceived(wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return loop.webSocketWriteable(wsi)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        return loop.webSocketPeerClosing(wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_CLOSED:
        loop.webSocketClosed(wsi)
        return 0
    case LWS_CALLBACK_RAW_ADOPT:
        // lws could not read a request line (garbage, TLS, HTTP/2, an unknown method, CONNECT)
        // and fell back to a raw socket: its bytes follow in RAW_RX, answered there.
        return 0
    case LWS_CALLBACK_RAW_RX:
        return loop.rawReceived(wsi, UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length))
    case LWS_CALLBACK_RAW_WRITEABLE:
        return loop.rawWriteable(wsi)
    case LWS_CALLBACK_TIMER:
        return loop.timerFired(wsi)
    default:
        return 0
    }
}

/// Routes lws' own log lines (errors only) to standard error, at most `linesPerSecond` a
/// second (then one line saying how many were left out). A failed accept (`accept: errno N`)
/// is handed to the loop of the service thread it was raised on instead (`DescriptorShortage`,
/// decisions E34): lws raised it on every pass while out of descriptors, about 20 MB a second.
enum LWSLogging {
    private static let configured: Void = {
        lws_set_log_level(LLL_ERR, lwsLogLine)
    }()

    static func configure() {
        _ = configured
    }

    static let linesPerSecond = 20
    /// The current second's start, lines written in it, and lines left out since the last note.
    static let window = Mutex<(start: ContinuousClock.Instant, written: Int, dropped: Int)>((.now, 0, 0))

    /// Whether a line may be written now, and how many were left out before it (to say so).
    static func admit() -> (write: Bool, dropped: Int) {
        window.withLock { window in
            let now = ContinuousClock.now
            var dropped = 0
            if now - window.start >= .seconds(1) {
                dropped = window.dropped
                window = (now, 0, 0)
            }
            guard window.written < linesPerSecond else {
                window.dropped += 1
                return (false, 0)
            }
            window.written += 1
            return (true, dropped)
        }
    }
}

private func lwsLogLine(_ level: Int32, _ line: UnsafePointer<CChar>?) {
    guard let line else { return }
    if let code = DescriptorShortage.acceptErrno(line),
       let loop = Thread.current.threadDictionary[ServiceLoop.threadKey] as? ServiceLoop {
        loop.acceptFailed(errno: code)
        return
    }
    let (write, dropped) = LWSLogging.admit()
    if dropped > 0 { ErrorReport.line("\(dropped) lines of libwebsockets' log were left out (at most \(LWSLogging.linesPerSecond) a second)") }
    guard write else { return }
    let prefix = LogTimestamp.now() + " libwebsockets: "
    _ = prefix.withCString { Glibc.write(2, $0, strlen($0)) }
    _ = Glibc.write(2, line, strlen(line))
}
