import Foundation

/// The binary frames that carry messenger payloads on the stream WebSocket (decisions G5).
/// Integers are big-endian; IDs are the 16 bytes of a UUID.
///
/// Client → server: `0x01, flags, session(16), clientSequence(u32), typeLength(u16), type,
/// recipientCount(u16), recipients(16 each; 0 = all), payload`. Flags: bit 0 reliable, bit 1
/// acknowledge (the server answers `session.sent` with the assigned sequence).
///
/// Server → client: `0x01, flags, session(16), source participant(16), sequence(u64; 0 for
/// unreliable), typeLength(u16), type, payload`.
enum SessionFrames {
    static let message: UInt8 = 0x01
    static let reliableFlag: UInt8 = 0x01
    static let acknowledgeFlag: UInt8 = 0x02

    struct Outgoing {
        var reliable: Bool
        var acknowledge: Bool
        var session: UUID
        var clientSequence: UInt32
        var type: ArraySlice<UInt8>
        var recipients: [UUID]
        var payload: ArraySlice<UInt8>
    }

    /// Reads a client frame; nil when it is malformed.
    static func parse(_ bytes: [UInt8]) -> Outgoing? {
        guard bytes.count >= 24, bytes[0] == message else { return nil }
        let session = uuid(bytes, at: 2)
        let clientSequence = UInt32(bytes[18]) << 24 | UInt32(bytes[19]) << 16 | UInt32(bytes[20]) << 8 | UInt32(bytes[21])
        let typeLength = Int(bytes[22]) << 8 | Int(bytes[23])
        var index = 24 + typeLength
        guard bytes.count >= index + 2 else { return nil }
        let type = bytes[24..<index]
        let count = Int(bytes[index]) << 8 | Int(bytes[index + 1])
        index += 2
        guard bytes.count >= index + count * 16 else { return nil }
        var recipients: [UUID] = []
        recipients.reserveCapacity(count)
        for _ in 0..<count {
            recipients.append(uuid(bytes, at: index))
            index += 16
        }
        return Outgoing(reliable: bytes[1] & reliableFlag != 0, acknowledge: bytes[1] & acknowledgeFlag != 0, session: session,
                        clientSequence: clientSequence, type: type, recipients: recipients, payload: bytes[index...])
    }

    /// The frame receivers get.
    static func delivery(_ outgoing: Outgoing, source: UUID, sequence: UInt64) -> [UInt8] {
        var frame: [UInt8] = []
        frame.reserveCapacity(44 + outgoing.type.count + outgoing.payload.count)
        frame.append(message)
        frame.append(outgoing.reliable ? reliableFlag : 0)
        append(outgoing.session, to: &frame)
        append(source, to: &frame)
        for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: sequence >> UInt64(shift))) }
        frame.append(UInt8(outgoing.type.count >> 8))
        frame.append(UInt8(truncatingIfNeeded: outgoing.type.count))
        frame.append(contentsOf: outgoing.type)
        frame.append(contentsOf: outgoing.payload)
        return frame
    }

    static func uuid(_ bytes: [UInt8], at index: Int) -> UUID {
        UUID(uuid: (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3], bytes[index + 4], bytes[index + 5],
                    bytes[index + 6], bytes[index + 7], bytes[index + 8], bytes[index + 9], bytes[index + 10], bytes[index + 11],
                    bytes[index + 12], bytes[index + 13], bytes[index + 14], bytes[index + 15]))
    }

    static func append(_ id: UUID, to frame: inout [UInt8]) {
        withUnsafeBytes(of: id.uuid) { frame.append(contentsOf: $0) }
    }
}
