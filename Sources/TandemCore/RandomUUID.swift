public import Foundation

extension UUID {
    /// A random (version 4) UUID from the system's random source: Swift's
    /// `SystemRandomNumberGenerator`, which on Linux calls `getrandom(2)` and needs no
    /// descriptor. Foundation's `UUID()` returned all zeros when the process was out of
    /// descriptors (stop 44's third review: records created without a name during a flood of
    /// connections all got `00000000-0000-4000-8000-000000000000`, and all but one were lost).
    /// Every ID the server makes comes from here.
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = (bytes[6] & 0x0F) | 0x40   // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80   // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
