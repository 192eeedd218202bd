import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds the descriptor a server listens through, in this process or in a child, for tests
/// that break a listening socket behind the server's back (the listener watchdog's tests).
public enum ListeningSockets {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// The descriptor of this process listening on TCP `port`, or nil.
    public static func descriptor(port: Int) -> Int32? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.compactMap { Int32($0) }.first { listens($0, on: port) }
    }

    /// A descriptor of this process for the socket through which process `pid` listens on
    /// `port` (`pidfd_getfd(2)`: Linux 5.6, glibc 2.36; the same socket, so `shutdown(2)` on it
    /// acts in `pid` too). The caller closes it.
    public static func duplicate(from pid: Int32, port: Int) throws -> Int32 {
        typealias PidfdOpen = @convention(c) (Int32, UInt32) -> Int32
        typealias PidfdGetfd = @convention(c) (Int32, Int32, UInt32) -> Int32
        // Not in Swift's Glibc module: looked up by name.
        guard let library = dlopen(nil, RTLD_NOW), let openSymbol = dlsym(library, "pidfd_open"),
              let getSymbol = dlsym(library, "pidfd_getfd") else {
            throw Failure(description: "pidfd_open/pidfd_getfd not found (glibc 2.36 needed)")
        }
        let pidfdOpen = unsafeBitCast(openSymbol, to: PidfdOpen.self)
        let pidfdGetfd = unsafeBitCast(getSymbol, to: PidfdGetfd.self)
        let pidfd = pidfdOpen(pid, 0)
        guard pidfd >= 0 else { throw Failure(description: "pidfd_open(\(pid)): errno \(errno)") }
        defer { close(pidfd) }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        for number in names.compactMap({ Int32($0) }) {
            let copy = pidfdGetfd(pidfd, number, 0)
            guard copy >= 0 else { continue }
            if listens(copy, on: port) { return copy }
            close(copy)
        }
        throw Failure(description: "process \(pid) has no descriptor listening on port \(port)")
    }

    private static func listens(_ descriptor: Int32, on port: Int) -> Bool {
        var listening: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) == 0, listening != 0 else { return false }
        var storage = sockaddr_storage()
        var size = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &size) }
        }
        guard named == 0 else { return false }
        // sin_port and sin6_port sit at the same offset, right after the family.
        let bound = withUnsafeBytes(of: storage) { $0.load(fromByteOffset: 2, as: UInt16.self) }
        return Int(UInt16(bigEndian: bound)) == port
    }
}
