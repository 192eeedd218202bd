/// One `RECORD TYPE name ( item, ... )`: its declared fields and its grants.
///
/// `fields` holds the fields the file lists, in order. Every record type also has the six
/// system fields (`SystemField`); a file lists one only to give it options (indexes), and a
/// listed system field keeps its fixed type. `field(named:)` finds either kind.
/// CloudKit schema language, spec §5.2.
public struct RecordType: Sendable, Hashable {
    public var name: String
    public var fields: [Field]
    public var grants: [Grant]

    public init(name: String, fields: [Field] = [], grants: [Grant] = []) {
        self.name = name
        self.fields = fields
        self.grants = grants
    }

    /// A declared field, or the implicit system field of that name.
    public func field(named name: String) -> Field? {
        fields.first { $0.name == name } ?? SystemField(rawValue: name)?.field
    }

    /// Declared fields followed by the system fields the file did not list: every field a
    /// record of this type has.
    public var allFields: [Field] {
        fields + SystemField.allCases.filter { system in !fields.contains { $0.name == system.rawValue } }.map(\.field)
    }

    /// The rights each role holds, merging every grant to it (`GRANT READ TO r, GRANT WRITE TO r`
    /// is `[.read, .write]` for `r`). Roles without a grant are absent.
    public var rightsByRole: [String: Rights] {
        grants.reduce(into: [:]) { $0[$1.role, default: []].formUnion($1.rights) }
    }
}

/// The fields CloudKit keeps on every record (spec §5.2, "Implicit fields").
public enum SystemField: String, Sendable, CaseIterable {
    case createTime = "___createTime"
    case createdBy = "___createdBy"
    case etag = "___etag"
    case modTime = "___modTime"
    case modifiedBy = "___modifiedBy"
    case recordID = "___recordID"

    /// The fixed type of the field.
    public var type: DataType {
        switch self {
        case .createTime, .modTime: .timestamp
        case .createdBy, .modifiedBy, .recordID: .reference
        case .etag: .string
        }
    }

    /// The field as an unlisted system field is: its type, no options.
    public var field: Field { Field(name: rawValue, type: type) }

    /// True for a name with the system prefix `___`.
    public static func hasSystemPrefix(_ name: String) -> Bool { name.hasPrefix("___") }
}
