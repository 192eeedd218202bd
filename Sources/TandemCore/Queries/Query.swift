/// A query over one record type (CloudKit Web Services: Types, "Query Dictionary").
public struct Query: Sendable, Hashable {
    public var recordType: String
    public var filters: [Filter]
    public var sorts: [Sort]

    public init(recordType: String, filters: [Filter] = [], sorts: [Sort] = []) {
        self.recordType = recordType
        self.filters = filters
        self.sorts = sorts
    }
}

/// A field a filter or sort names: a user field, or a system field.
public enum QueryField: Sendable, Hashable, CustomStringConvertible {
    case user(String)
    case system(SystemField)

    public var description: String {
        switch self {
        case .user(let name): name
        case .system(let field): field.rawValue
        }
    }
}

/// System fields usable in filters and sorts (`systemFieldName`, or the `___` schema name in
/// `fieldName`). CloudKit Web Services: Query, "systemFieldName".
public enum SystemField: String, Sendable, CaseIterable {
    case recordName
    case share
    case parent
    case createdUserRecordName
    case createdTimestamp
    case modifiedTimestamp
    case modifiedUserRecordName

    /// The schema-language spelling (`___recordID`, `___createTime`, ...).
    public var schemaName: String {
        switch self {
        case .recordName: "___recordID"
        case .share: "___share"
        case .parent: "___parent"
        case .createdUserRecordName: "___createdBy"
        case .createdTimestamp: "___createTime"
        case .modifiedTimestamp: "___modTime"
        case .modifiedUserRecordName: "___modifiedBy"
        }
    }

    public init?(schemaName: String) {
        let lowered = schemaName.lowercased()
        guard let field = SystemField.allCases.first(where: { $0.schemaName.lowercased() == lowered }) else { return nil }
        self = field
    }
}

/// The comparators of CloudKit Web Services (Types, "Filter Dictionary"), exact list.
public enum Comparator: String, Sendable, CaseIterable {
    case equals = "EQUALS"
    case notEquals = "NOT_EQUALS"
    case lessThan = "LESS_THAN"
    case lessThanOrEquals = "LESS_THAN_OR_EQUALS"
    case greaterThan = "GREATER_THAN"
    case greaterThanOrEquals = "GREATER_THAN_OR_EQUALS"
    case near = "NEAR"
    case containsAllTokens = "CONTAINS_ALL_TOKENS"
    case containsAnyTokens = "CONTAINS_ANY_TOKENS"
    case `in` = "IN"
    case notIn = "NOT_IN"
    case listContains = "LIST_CONTAINS"
    case notListContains = "NOT_LIST_CONTAINS"
    case notListContainsAny = "NOT_LIST_CONTAINS_ANY"
    case beginsWith = "BEGINS_WITH"
    case notBeginsWith = "NOT_BEGINS_WITH"
    case listMemberBeginsWith = "LIST_MEMBER_BEGINS_WITH"
    case notListMemberBeginsWith = "NOT_LIST_MEMBER_BEGINS_WITH"
    case listContainsAll = "LIST_CONTAINS_ALL"
    case notListContainsAll = "NOT_LIST_CONTAINS_ALL"

    /// True for comparators whose value is a list (`IN`, `LIST_CONTAINS_ALL`, ...).
    public var takesList: Bool {
        switch self {
        case .in, .notIn, .notListContainsAny, .listContainsAll, .notListContainsAll: true
        default: false
        }
    }

    /// True for comparators that select records NOT matching a positive condition.
    public var isNegation: Bool {
        switch self {
        case .notEquals, .notIn, .notListContains, .notListContainsAny, .notBeginsWith, .notListMemberBeginsWith,
             .notListContainsAll: true
        default: false
        }
    }
}

/// One filter. `value` is a list for comparators that take one; `distance` (metres) only for `NEAR`.
public struct Filter: Sendable, Hashable {
    public var comparator: Comparator
    public var field: QueryField
    public var value: FieldValue
    public var distance: Double?

    public init(comparator: Comparator, field: QueryField, value: FieldValue, distance: Double? = nil) {
        self.comparator = comparator
        self.field = field
        self.value = value
        self.distance = distance
    }
}

/// One sort key; `relativeLocation` sorts a LOCATION field by distance from it.
public struct Sort: Sendable, Hashable {
    public var field: QueryField
    public var ascending: Bool
    public var relativeLocation: Location?

    public init(field: QueryField, ascending: Bool = true, relativeLocation: Location? = nil) {
        self.field = field
        self.ascending = ascending
        self.relativeLocation = relativeLocation
    }
}
