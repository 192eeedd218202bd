/// A JSON document held as Swift values.
///
/// Integers keep all 64 bits (`int`), so `INT64` field values and timestamps round-trip exactly;
/// numbers with a fraction or exponent are `double`. Objects keep their keys in the order they
/// were read or built; lookups are linear, which is fast for the small dictionaries of the
/// CloudKit Web Services wire format.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
    /// JSON text written earlier by `JSONWriter` and kept as bytes (a record's stored fields),
    /// copied into output as is. Never produced by `JSONParser`.
    case fragment(JSONFragment)
}

/// Valid JSON text kept as bytes, to be copied into a larger document without re-encoding.
public struct JSONFragment: Sendable, Hashable {
    public let bytes: [UInt8]

    /// `bytes` must be one complete JSON value as `JSONWriter` writes it.
    public init(trusted bytes: [UInt8]) { self.bytes = bytes }
}

/// An ordered JSON object.
public struct JSONObject: Sendable, Hashable, ExpressibleByDictionaryLiteral {
    public private(set) var entries: [(key: String, value: JSONValue)]

    public init() { entries = [] }

    public init(_ entries: [(key: String, value: JSONValue)]) { self.entries = entries }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        entries = elements.map { (key: $0.0, value: $0.1) }
    }

    /// The value for `key`, or nil. Setting nil removes the key; setting an existing key keeps
    /// its position.
    public subscript(key: String) -> JSONValue? {
        get {
            for entry in entries where entry.key == key { return entry.value }
            return nil
        }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append((key: key, value: newValue))
            }
        }
    }

    public var keys: [String] { entries.map(\.key) }
    public var isEmpty: Bool { entries.isEmpty }
    public var count: Int { entries.count }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        guard lhs.entries.count == rhs.entries.count else { return false }
        for entry in lhs.entries where rhs[entry.key] != entry.value { return false }
        return true
    }

    public func hash(into hasher: inout Hasher) {
        // Order-insensitive, to agree with ==.
        var combined = 0
        for entry in entries {
            var h = Hasher()
            h.combine(entry.key)
            h.combine(entry.value)
            combined ^= h.finalize()
        }
        hasher.combine(combined)
    }
}

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The value as an exact integer: an `int`, or a `double` with no fraction that fits.
    public var int64Value: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.isFinite, d.rounded() == d, d >= -9.223372036854775808e18, d < 9.223372036854775808e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The value as a Double (ints convert; may round beyond 2^53).
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name for the JSON kind, for error reasons ("expected a string, found an array").
    public var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object, .fragment: "an object"
        }
    }
}
