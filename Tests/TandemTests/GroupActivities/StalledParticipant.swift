import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A stream WebSocket peer that joins a session with one raw text frame and then never reads
/// again (a tiny receive buffer): the client that stops reading.
final class StalledParticipant {
    private let socket: Int32

    init(port: Int, container: String, token: String, sessionID: UUID) throws {
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
        let request = "GET /stream/1/\(container)/development HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer \(token)\r\n\r\n"
        try write(Array(request.utf8))
        // The handshake answer, then nothing more is ever read.
        var buffer = [UInt8](repeating: 0, count: 512)
        guard recv(socket, &buffer, buffer.count, 0) > 0 else { throw TestFailure("no handshake answer") }
        let join = Array(#"{"type":"session.join","id":1,"sessionID":"\#(sessionID.uuidString)"}"#.utf8)
        // A masked text frame (clients must mask; a zero key leaves the payload as is).
        try write([0x81, 0x80 | UInt8(join.count), 0, 0, 0, 0] + join)
    }

    private func write(_ bytes: [UInt8]) throws {
        guard bytes.withUnsafeBytes({ send(socket, $0.baseAddress, $0.count, 0) }) == bytes.count else { throw TestFailure("send failed") }
    }

    /// Whether the server still holds the connection open (no FIN or reset queued), without reading data.
    var isOpen: Bool {
        var info = tcp_info()
        var size = socklen_t(MemoryLayout<tcp_info>.size)
        getsockopt(socket, Int32(IPPROTO_TCP), TCP_INFO, &info, &size)
        return info.tcpi_state == UInt8(TCP_ESTABLISHED)
    }

    deinit { close(socket) }
}
