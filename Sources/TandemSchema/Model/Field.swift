/// One field of a record type: `name data-type { QUERYABLE | SORTABLE | SEARCHABLE }`.
/// CloudKit schema language, spec §5.2.
public struct Field: Sendable, Hashable {
    public var name: String
    public var type: DataType
    public var options: FieldOptions

    public init(name: String, type: DataType, options: FieldOptions = []) {
        self.name = name
        self.type = type
        self.options = options
    }

    /// True for one of the six implicit system fields (`___createTime`, ...).
    public var isSystem: Bool { SystemField(rawValue: name) != nil }
}

/// The index options of a field (spec §5.2): `QUERYABLE` is an equality index, `SORTABLE` a
/// range and sort index, `SEARCHABLE` a full-text index (strings only; backs
/// `CONTAINS_ALL_TOKENS` and `CONTAINS_ANY_TOKENS`).
public struct FieldOptions: KeywordOptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let queryable = FieldOptions(rawValue: 1)
    public static let sortable = FieldOptions(rawValue: 2)
    public static let searchable = FieldOptions(rawValue: 4)

    /// Each option with its keyword, in the order the printer writes them: CloudKit's export
    /// order (`STRING QUERYABLE SEARCHABLE SORTABLE`).
    public static let keywords: [(member: FieldOptions, keyword: String)] = [
        (.queryable, "QUERYABLE"), (.searchable, "SEARCHABLE"), (.sortable, "SORTABLE"),
    ]
}
