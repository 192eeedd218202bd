import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket peer that completes the handshake and then never reads (a tiny receive buffer),
/// to play the slow consumer.
final class StalledWebSocket {
    private let socket: Int32

    init(port: Int, path: String, token: String) throws {
        socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var small: Int32 = 4096
        setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connect failed") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        _ = request.withCString { send(socket, $0, strlen($0), 0) }
        // Read only the handshake answer, then stop reading for good.
        var buffer = [UInt8](repeating: 0, count: 256)
        _ = recv(socket, &buffer, buffer.count, 0)
    }

    /// Whether the server closed the connection (a read returns 0 or fails) within `seconds`.
    func waitUntilClosed(seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var drain = [UInt8](repeating: 0, count: 65536)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Reading now drains what was queued; a closed connection ends in 0 or ECONNRESET.
        while Date() < deadline {
            let count = recv(socket, &drain, drain.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        }
        return false
    }

    deinit { close(socket) }
}
