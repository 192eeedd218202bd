import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP listener that accepts connections and never says a word: a WebSocket
/// `connect` to it waits for the handshake answer (until lws' 10 s connect timeout).
public final class SilentPeer {
    public let port: Int
    private let listener: Int32
    private var accepted: [Int32] = []

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    public init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            Glibc.close(listener)
            throw Failure(description: "bind/listen: errno \(code)")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        accepted.forEach { Glibc.close($0) }
        Glibc.close(listener)
    }

    /// Accepts one connection, waiting at most `seconds`; keeps it open, unanswered.
    public func acceptOne(within seconds: Double) -> Bool {
        var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, Int32(seconds * 1000)) == 1 else { return false }
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return false }
        accepted.append(connection)
        return true
    }
}
