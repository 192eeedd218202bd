/// Where a page of a query ended: the sort key values of its last record and that record's
/// store key (the final tie-breaker of every query order). The next page starts strictly after
/// it (keyset paging), so records inserted or deleted before it move nothing: no record is
/// skipped or returned twice, and a page deep in a result costs what the first one does.
///
/// `bytes` is a self-describing encoding (the server MACs it into a `continuationMarker`):
/// record key (8 bytes big-endian), key count (1 byte), then per key a tag (0 NULL, 1 integer,
/// 2 real, 3 text, 4 bytes) and its value (8 bytes, or a 4-byte length and the bytes).
public struct QueryCursor: Sendable, Equatable {
    /// One sort key value as the store returned it.
    public enum Key: Sendable, Equatable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        case bytes([UInt8])
    }

    public var keys: [Key]
    public var recordKey: Int64

    public init(keys: [Key], recordKey: Int64) {
        self.keys = keys
        self.recordKey = recordKey
    }

    public var bytes: [UInt8] {
        var out: [UInt8] = []
        func append(_ value: UInt64, width: Int) {
            for shift in stride(from: (width - 1) * 8, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }
        append(UInt64(bitPattern: recordKey), width: 8)
        out.append(UInt8(keys.count))
        for key in keys {
            switch key {
            case .null: out.append(0)
            case .integer(let number): out.append(1); append(UInt64(bitPattern: number), width: 8)
            case .real(let number): out.append(2); append(number.bitPattern, width: 8)
            case .text(let text): out.append(3); append(UInt64(text.utf8.count), width: 4); out += Array(text.utf8)
            case .bytes(let data): out.append(4); append(UInt64(data.count), width: 4); out += data
            }
        }
        return out
    }

    /// Decodes `bytes`; nil when they are not a whole cursor.
    public init?(bytes: [UInt8]) {
        var index = 0
        func read(_ width: Int) -> UInt64? {
            guard bytes.count - index >= width else { return nil }
            defer { index += width }
            return bytes[index..<index + width].reduce(0) { $0 << 8 | UInt64($1) }
        }
        func take(_ count: Int) -> [UInt8]? {
            guard bytes.count - index >= count else { return nil }
            defer { index += count }
            return Array(bytes[index..<index + count])
        }
        guard let record = read(8), let count = read(1) else { return nil }
        var keys: [Key] = []
        for _ in 0..<count {
            guard let tag = read(1) else { return nil }
            switch tag {
            case 0: keys.append(.null)
            case 1: guard let v = read(8) else { return nil }; keys.append(.integer(Int64(bitPattern: v)))
            case 2: guard let v = read(8) else { return nil }; keys.append(.real(Double(bitPattern: v)))
            case 3, 4:
                guard let length = read(4), let data = take(Int(length)) else { return nil }
                if tag == 3 {
                    guard let text = String(validating: data, as: UTF8.self) else { return nil }
                    keys.append(.text(text))
                } else {
                    keys.append(.bytes(data))
                }
            default: return nil
            }
        }
        guard index == bytes.count else { return nil }
        self.init(keys: keys, recordKey: Int64(bitPattern: record))
    }
}
