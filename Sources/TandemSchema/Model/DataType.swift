/// The type of a field in the schema language (spec §5.2):
/// `primitive | LIST< primitive >`.
///
/// `description` is the `.ckdb` spelling (`LIST<STRING>`, `ENCRYPTED INT64`,
/// `NUMBER PREFERRED AS DOUBLE`), which the printer writes.
public enum DataType: Sendable, Hashable, CustomStringConvertible {
    case primitive(Primitive)
    /// A list of one primitive type; lists do not nest.
    case list(Primitive)

    public static let string = DataType.primitive(.string)
    public static let timestamp = DataType.primitive(.timestamp)
    public static let reference = DataType.primitive(.reference)

    /// The primitive, or the list's element type.
    public var element: Primitive {
        switch self {
        case .primitive(let p), .list(let p): p
        }
    }

    public var description: String {
        switch self {
        case .primitive(let p): p.description
        case .list(let p): "LIST<\(p)>"
        }
    }
}

/// A single-value type (spec §5.2 `primitive`).
public enum Primitive: Sendable, Hashable, CustomStringConvertible {
    case asset, bytes, double, int64, location, reference, string, timestamp
    /// `ENCRYPTED t`: the client encrypts the value; the server stores ciphertext.
    case encrypted(EncryptedType)
    /// `NUMBER [PREFERRED AS INT64|DOUBLE]`: a number whose storage type was inferred
    /// (just-in-time schema) and, with `PREFERRED AS`, pinned.
    case number(preferred: NumberType?)

    /// The plain types by keyword; `ENCRYPTED` and `NUMBER` take more words.
    public static let plain: [String: Primitive] = [
        "ASSET": .asset, "BYTES": .bytes, "DOUBLE": .double, "INT64": .int64, "LOCATION": .location,
        "REFERENCE": .reference, "STRING": .string, "TIMESTAMP": .timestamp,
    ]

    public var description: String {
        switch self {
        case .asset: "ASSET"
        case .bytes: "BYTES"
        case .double: "DOUBLE"
        case .int64: "INT64"
        case .location: "LOCATION"
        case .reference: "REFERENCE"
        case .string: "STRING"
        case .timestamp: "TIMESTAMP"
        case .encrypted(let t): "ENCRYPTED \(t.rawValue)"
        case .number(nil): "NUMBER"
        case .number(let p?): "NUMBER PREFERRED AS \(p.rawValue)"
        }
    }
}

/// The types `ENCRYPTED` may precede (spec §5.2).
public enum EncryptedType: String, Sendable, Hashable, CaseIterable {
    case bytes = "BYTES", string = "STRING", double = "DOUBLE", int64 = "INT64", location = "LOCATION", timestamp = "TIMESTAMP"
}

/// The types `NUMBER PREFERRED AS` may name (spec §5.2).
public enum NumberType: String, Sendable, Hashable, CaseIterable {
    case int64 = "INT64", double = "DOUBLE"
}
