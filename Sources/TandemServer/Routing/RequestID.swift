import Foundation
import TandemCore

/// A request's `uuid` (echoed in error bodies and the log): a random (version 4) UUID in lower
/// case, `8-4-4-4-12` hex digits. Written from the UUID's bytes with a digit table:
/// `UUID().uuidString.lowercased()` formats through `snprintf` and then lower-cases a copy,
/// about 8,000 instructions, and a request made three (decisions E17).
enum RequestID {
    private static let digits = Array("0123456789abcdef".utf8)

    static func make() -> String {
        withUnsafeBytes(of: UUID.random().uuid) { bytes in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for (index, byte) in bytes.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    text[at] = digits[Int(byte >> 4)]
                    text[at + 1] = digits[Int(byte & 0x0f)]
                    at += 2
                }
                return at
            }
        }
    }
}
