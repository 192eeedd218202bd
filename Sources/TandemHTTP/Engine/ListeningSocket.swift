import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which socket a server listens on: the descriptor number and the socket it held at start
/// (device and inode, as `fstat` reports them), so that a later look can tell "still ours"
/// from "closed" or "that number now names something else".
struct ListeningSocket: Sendable, Equatable {
    var descriptor: Int32
    var device: UInt64
    var inode: UInt64
    var port: Int

    /// The process's listening TCP socket on `port` bound for `host`. libwebsockets 4.1 does not
    /// say which descriptor it bound, so this looks through `/proc/self/fd`: listening sockets
    /// (`SO_ACCEPTCONN`) on that port, narrowed by address when there are several (one process
    /// can listen on one port for two addresses). `nil` when none or several fit.
    static func find(port: Int, host: String) -> ListeningSocket? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        var found: [(socket: ListeningSocket, address: Address)] = []
        for name in names {
            guard let descriptor = Int32(name), let socket = look(at: descriptor),
                  socket.socket.port == port else { continue }
            found.append(socket)
        }
        if found.count > 1, let wanted = Address(host: host) {
            found.removeAll { $0.address != wanted }
        }
        return found.count == 1 ? found[0].socket : nil
    }

    /// Why `descriptor` no longer holds this listening socket, or nil while it does.
    func problem() -> String? {
        guard let now = Self.look(at: descriptor) else {
            var status = stat()
            if fstat(descriptor, &status) != 0 { return "descriptor \(descriptor) was closed" }
            if UInt64(status.st_ino) != inode || UInt64(status.st_dev) != device {
                return "descriptor \(descriptor) now refers to another file"
            }
            return "the socket on descriptor \(descriptor) no longer listens"
        }
        if now.socket.inode != inode || now.socket.device != device {
            return "descriptor \(descriptor) now refers to another listening socket"
        }
        if now.socket.port != port {
            return "the socket on descriptor \(descriptor) listens on port \(now.socket.port) now"
        }
        return nil
    }

    /// An IPv4 or IPv6 address as bytes, to compare a bound address with a configured host.
    struct Address: Equatable {
        var family: Int32
        var bytes: [UInt8]

        /// `""`, `"0.0.0.0"` and `"*"` mean every interface: lws binds `::` for them (or
        /// `0.0.0.0` with IPv6 off); either counts.
        init?(host: String) {
            if host.isEmpty || host == "0.0.0.0" || host == "*" {
                self.init(family: AF_UNSPEC, bytes: [])
                return
            }
            var v4 = in_addr()
            var v6 = in6_addr()
            if inet_pton(AF_INET, host, &v4) == 1 {
                self.init(family: AF_INET, bytes: withUnsafeBytes(of: v4) { Array($0) })
            } else if inet_pton(AF_INET6, host, &v6) == 1 {
                self.init(family: AF_INET6, bytes: withUnsafeBytes(of: v6) { Array($0) })
            } else {
                return nil
            }
        }

        init(family: Int32, bytes: [UInt8]) {
            self.family = family
            self.bytes = bytes
        }

        static func == (lhs: Address, rhs: Address) -> Bool {
            func isAny(_ address: Address) -> Bool {
                address.family == AF_UNSPEC || address.bytes.allSatisfy { $0 == 0 }
            }
            if isAny(lhs) || isAny(rhs) { return isAny(lhs) && isAny(rhs) }
            return lhs.family == rhs.family && lhs.bytes == rhs.bytes
        }
    }

    /// The listening TCP socket on `descriptor` with its bound address, or nil when it is not one.
    private static func look(at descriptor: Int32) -> (socket: ListeningSocket, address: Address)? {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return nil }
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else { return nil }
        var storage = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &size) }
        }
        guard named == 0 else { return nil }
        let port: Int
        let address: Address
        switch Int32(storage.ss_family) {
        case AF_INET:
            let v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
            port = Int(UInt16(bigEndian: v4.sin_port))
            address = Address(family: AF_INET, bytes: withUnsafeBytes(of: v4.sin_addr) { Array($0) })
        case AF_INET6:
            let v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
            port = Int(UInt16(bigEndian: v6.sin6_port))
            address = Address(family: AF_INET6, bytes: withUnsafeBytes(of: v6.sin6_addr) { Array($0) })
        default:
            return nil
        }
        return (ListeningSocket(descriptor: descriptor, device: UInt64(status.st_dev), inode: UInt64(status.st_ino), port: port),
                address)
    }
}
