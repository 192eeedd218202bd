/// A CIDR block (`10.0.0.0/8`, `fc00::/7`); a bare address is its own /32 or /128.
/// `tandem serve --webhook-allow CIDR` takes these.
public struct AddressRange: Hashable, Sendable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// Parses `ADDRESS[/PREFIX]` with the strict numeric forms only (`inet_pton`: dotted
    /// decimal IPv4, RFC 4291 IPv6); host bits must be zero. `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let address = IPAddress(numeric: String(parts[0])) else { return nil }
        let width = address.bytes.count * 8
        var length = width
        if parts.count == 2 {
            guard !parts[1].isEmpty, parts[1].count <= 3, parts[1].allSatisfy(\.isASCII), let n = Int(parts[1]),
                  (0...width).contains(n) else { return nil }
            length = n
        }
        guard Self.masked(address.bytes, length) == address.bytes else { return nil }
        network = address
        prefixLength = length
    }

    /// Whether `address` (of the same family) lies in the block.
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, prefixLength) == network.bytes
    }

    public var description: String { "\(network)/\(prefixLength)" }

    private static func masked(_ bytes: [UInt8], _ length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let keep = max(0, min(8, length - index * 8))
            return keep == 8 ? byte : byte & ~(UInt8(0xff) >> keep)
        }
    }
}
