import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A WebSocket peer that completes the handshake, may send a few text frames, and then never
/// reads again (a tiny receive buffer): the slow consumer, the client that stops reading.
public final class StalledWebSocket {
    private let socket: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Connects to `127.0.0.1:port`, upgrades `path` with `token`, and reads only the handshake answer.
    public init(port: Int, path: String, token: String) throws {
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
        guard connected == 0 else { throw Failure(description: "connect failed") }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        try write(Array(request.utf8))
        var buffer = [UInt8](repeating: 0, count: 512)
        guard recv(socket, &buffer, buffer.count, 0) > 0 else { throw Failure(description: "no handshake answer") }
    }

    /// Sends one masked text frame of at most 125 bytes (clients must mask; a zero key leaves the payload as is).
    public func send(text: String) throws {
        let payload = Array(text.utf8)
        precondition(payload.count <= 125, "a short frame only")
        try write([0x81, 0x80 | UInt8(payload.count), 0, 0, 0, 0] + payload)
    }

    private func write(_ bytes: [UInt8]) throws {
        guard bytes.withUnsafeBytes({ Glibc.send(socket, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw Failure(description: "send failed")
        }
    }

    /// Whether the server still holds the connection open (no FIN or reset queued), without reading data.
    public var isOpen: Bool {
        var info = tcp_info()
        var size = socklen_t(MemoryLayout<tcp_info>.size)
        getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &size)
        return info.tcpi_state == UInt8(TCP_ESTABLISHED)
    }

    /// Whether the server closed the connection (a read returns 0 or fails) within `seconds`.
    /// Reading drains what was queued.
    public func waitUntilClosed(seconds: Double) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var drain = [UInt8](repeating: 0, count: 65536)
        var timeout = timeval(tv_sec: 0, tv_usec: 200_000)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        while Date() < deadline {
            let count = recv(socket, &drain, drain.count, 0)
            if count == 0 || (count < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        }
        return false
    }

    deinit { close(socket) }
}
