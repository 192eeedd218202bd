import Foundation
import Glibc

/// A plain TCP connection to a loopback port, for requests no HTTP client would send:
/// exact bytes, heads without their body, garbage.
public final class RawSocket {
    private let fd: Int32

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// What came back: the bytes, whether the server closed the connection, and how long
    /// it took (seconds).
    public struct Reply: Sendable {
        public var bytes: [UInt8]
        public var closed: Bool
        public var seconds: Double
        public var text: String { String(decoding: bytes, as: UTF8.self) }
        /// The status code of the first status line, or nil.
        public var status: Int? {
            guard text.hasPrefix("HTTP/"), let line = text.split(separator: "\r\n").first else { return nil }
            let parts = line.split(separator: " ")
            return parts.count >= 2 ? Int(parts[1]) : nil
        }
        /// The body after the first head, when there is one.
        public var body: String {
            guard let range = text.range(of: "\r\n\r\n") else { return "" }
            return String(text[range.upperBound...])
        }
        public func header(_ name: String) -> String? {
            guard let end = text.range(of: "\r\n\r\n") else { return nil }
            for line in text[..<end.lowerBound].split(separator: "\r\n").dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                if parts.count == 2, parts[0].lowercased() == name.lowercased() { return parts[1].trimmingCharacters(in: .whitespaces) }
            }
            return nil
        }
    }

    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        // deinit runs even when this init throws (the object is complete): it closes `fd`, once.
        guard result == 0 else { throw Failure(description: "connect: errno \(errno)") }
    }

    deinit { Glibc.close(fd) }

    /// Sends every byte; a server that closed early ends the sending quietly.
    public func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    public func send(_ text: String) { send(Array(text.utf8)) }

    /// Reads until the server closes the connection, or `seconds` pass.
    public func readUntilClosed(seconds: Double) -> Reply {
        let started = Date()
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let left = seconds - Date().timeIntervalSince(started)
            if left <= 0 { return Reply(bytes: bytes, closed: false, seconds: Date().timeIntervalSince(started)) }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, left * 1000)))
            if ready <= 0 { continue }
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return Reply(bytes: bytes, closed: true, seconds: Date().timeIntervalSince(started)) }
            bytes += chunk[..<count]
        }
    }
}
