/// Serialises `JSONValue` to compact UTF-8 JSON text.
///
/// Doubles print in Swift's shortest round-trip form; non-finite doubles (which the codecs never
/// produce) print as `null` rather than invalid JSON.
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(value, into: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .int(let i): out.append(contentsOf: String(i).utf8)
        case .double(let d):
            if d.isFinite {
                out.append(contentsOf: String(d).utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .fragment(let fragment):
            out.append(contentsOf: fragment.bytes)
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (index, entry) in object.entries.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                writeString(entry.key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(entry.value, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = s
        text.withUTF8 { bytes in
            // Copy runs that need no escaping in one go; most strings are a single run.
            var runStart = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0x7F else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
                case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
                case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
                default:
                    out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                            hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
        }
        out.append(UInt8(ascii: "\""))
    }
}
