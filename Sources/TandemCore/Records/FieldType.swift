/// The `type` tag of a record field (CloudKit Web Services: Types, "Record Field Dictionary").
///
/// Lists are `*_LIST` of a scalar type. Asset values are tagged `ASSETID` in responses, as
/// CloudKit does; `ASSET` and `ASSETID` are both accepted on input.
public enum FieldType: Sendable, Hashable, CustomStringConvertible {
    case scalar(ScalarType)
    case list(ScalarType)

    public enum ScalarType: String, Sendable, CaseIterable {
        case string = "STRING"
        case int64 = "INT64"
        case double = "DOUBLE"
        case timestamp = "TIMESTAMP"
        case bytes = "BYTES"
        case reference = "REFERENCE"
        case location = "LOCATION"
        case asset = "ASSETID"
    }

    /// Parses a wire tag; nil for an unknown tag. `LIST` (element type unknown) is handled by the codec.
    public init?(wireName: String) {
        var name = wireName
        var isList = false
        if name.hasSuffix("_LIST") {
            name.removeLast(5)
            isList = true
        }
        if name == "ASSET" { name = "ASSETID" }
        if name == "NUMBER_INT64" { name = "INT64" }
        if name == "NUMBER_DOUBLE" { name = "DOUBLE" }
        if name == "ENCRYPTED_BYTES" { name = "BYTES" }
        guard let scalar = ScalarType(rawValue: name) else { return nil }
        self = isList ? .list(scalar) : .scalar(scalar)
    }

    public var wireName: String {
        switch self {
        case .scalar(let s): s.rawValue
        case .list(let s): s.rawValue + "_LIST"
        }
    }

    public var description: String { wireName }
}
