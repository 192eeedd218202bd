public import Glibc

/// One IPv4 or IPv6 address as bytes (4 or 16, network order), read from what the resolver
/// returned, never from URL text.
public struct IPAddress: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A numeric address in the strict `inet_pton` form (`127.0.0.1`, `::1`); no brackets.
    public init?(numeric text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// The address in a `sockaddr_in` / `sockaddr_in6`, as `getaddrinfo` returns it.
    public init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in.self).pointee.sin_addr
            self.bytes = withUnsafeBytes(of: v4) { Array($0) }
        case AF_INET6:
            let v6 = UnsafeRawPointer(address).assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_addr
            self.bytes = withUnsafeBytes(of: v6) { Array($0) }
        default:
            return nil
        }
    }

    public var isIPv4: Bool { bytes.count == 4 }

    /// The IPv4 address an IPv6 form carries and a connection would reach: IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`, deprecated), NAT64 (`64:ff9b::a.b.c.d`,
    /// RFC 6052) and 6to4 (`2002:AABB:CCDD::/48`, RFC 3056). `nil` for IPv4 and other IPv6.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let head = bytes[0..<10]
        if head.allSatisfy({ $0 == 0 }) && ((bytes[10] == 0xff && bytes[11] == 0xff) || (bytes[10] == 0 && bytes[11] == 0)) {
            // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4.
            if bytes[10] == 0 && bytes[12..<15].allSatisfy({ $0 == 0 }) && bytes[15] <= 1 { return nil }
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0] {
            return IPAddress(bytes: Array(bytes[12..<16]))
        }
        if bytes[0] == 0x20 && bytes[1] == 0x02 {
            return IPAddress(bytes: Array(bytes[2..<6]))
        }
        return nil
    }

    /// The numeric text (`169.254.169.254`, `::ffff:a9fe:a9fe`), as `inet_ntop` writes it.
    public var description: String {
        var copy = bytes
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(INET6_ADDRSTRLEN) + 1) { buffer in
            let family = isIPv4 ? AF_INET : AF_INET6
            guard inet_ntop(family, &copy, buffer.baseAddress, socklen_t(buffer.count)) != nil else { return "?" }
            return String(cString: buffer.baseAddress!)
        }
    }

    /// The form a URL authority or curl's `--connect-to` takes: IPv6 in brackets.
    public var hostForm: String { isIPv4 ? description : "[\(description)]" }

    /// A client address (numeric text) as per-address limits count it (N76): an IPv4 address
    /// whole; an IPv6 address by its /64, `2001:db8:1:2::/64`, since one subscriber usually
    /// holds a whole /64 and can send from any of its 2^64 addresses; text that is not an
    /// address as it is.
    public static func limitKey(_ text: String) -> String {
        guard let address = IPAddress(numeric: text), address.bytes.count == 16 else { return text }
        if let v4 = address.embeddedIPv4, address.bytes[0..<10].allSatisfy({ $0 == 0 }) { return v4.description }
        guard let prefix = IPAddress(bytes: Array(address.bytes[0..<8]) + [UInt8](repeating: 0, count: 8)) else { return text }
        return prefix.description + "/64"
    }
}
