internal import TandemCore

/// A query over one record type, built from Swift values (CloudKit's `CKQuery` without `NSPredicate`).
///
/// ```swift
/// let query = Query(recordType: "Note",
///                   filters: [.greaterThanOrEquals("stars", 4), .beginsWith("title", "Lis")],
///                   sort: [.ascending("title")])
/// let page = try await database.records(matching: query, inZoneWith: trips.zoneID, resultsLimit: 50)
/// ```
///
/// Filters are ANDed. A filter or sort needs the field's index (QUERYABLE, SORTABLE, SEARCHABLE)
/// once the schema has the field, else `invalidArguments` (decisions SC2). CloudKit Web Services:
/// Types, "Query Dictionary", "Filter Dictionary", "Sort Descriptor Dictionary".
public struct Query: Sendable, Hashable {
    /// One condition on a field (CloudKit Web Services' comparators).
    public struct Filter: Sendable, Hashable {
        let wire: TandemCore.Filter

        init(wire: TandemCore.Filter) { self.wire = wire }

        init(_ comparator: Comparator, _ field: String, _ value: any RecordValue, distance: Double? = nil) {
            let fieldValue = FieldValues.encode(value) ?? .string("")
            wire = TandemCore.Filter(comparator: comparator, field: Self.field(field), value: fieldValue, distance: distance)
        }

        /// `recordName`, `createdTimestamp`, ... name system fields; anything else is a user field.
        static func field(_ name: String) -> QueryField {
            SystemField(rawValue: name).map(QueryField.system) ?? .user(name)
        }

        public static func equals(_ field: String, _ value: any RecordValue) -> Filter { Filter(.equals, field, value) }
        public static func notEquals(_ field: String, _ value: any RecordValue) -> Filter { Filter(.notEquals, field, value) }
        public static func lessThan(_ field: String, _ value: any RecordValue) -> Filter { Filter(.lessThan, field, value) }
        public static func lessThanOrEquals(_ field: String, _ value: any RecordValue) -> Filter { Filter(.lessThanOrEquals, field, value) }
        public static func greaterThan(_ field: String, _ value: any RecordValue) -> Filter { Filter(.greaterThan, field, value) }
        public static func greaterThanOrEquals(_ field: String, _ value: any RecordValue) -> Filter { Filter(.greaterThanOrEquals, field, value) }
        public static func beginsWith(_ field: String, _ prefix: String) -> Filter { Filter(.beginsWith, field, prefix) }
        /// The field's value is one of `values` (pass an array).
        public static func `in`(_ field: String, _ values: any RecordValue) -> Filter { Filter(.in, field, values) }
        public static func notIn(_ field: String, _ values: any RecordValue) -> Filter { Filter(.notIn, field, values) }
        /// A list field contains `value`.
        public static func listContains(_ field: String, _ value: any RecordValue) -> Filter { Filter(.listContains, field, value) }
        /// Full-text search on a SEARCHABLE string field: every token of `text`.
        public static func containsAllTokens(_ field: String, _ text: String) -> Filter { Filter(.containsAllTokens, field, text) }
        public static func containsAnyTokens(_ field: String, _ text: String) -> Filter { Filter(.containsAnyTokens, field, text) }
        /// A LOCATION field within `radius` metres of `location`.
        public static func near(_ field: String, _ location: Location, radius: Double) -> Filter {
            Filter(.near, field, location, distance: radius)
        }
    }

    /// One sort key (`NSSortDescriptor`'s role).
    public struct Sort: Sendable, Hashable {
        let wire: TandemCore.Sort
        public static func ascending(_ field: String) -> Sort { Sort(wire: TandemCore.Sort(field: Filter.field(field), ascending: true)) }
        public static func descending(_ field: String) -> Sort { Sort(wire: TandemCore.Sort(field: Filter.field(field), ascending: false)) }
        /// Nearest first from `location`.
        public static func distance(_ field: String, from location: Location) -> Sort {
            Sort(wire: TandemCore.Sort(field: Filter.field(field), relativeLocation: FieldValues.wire(location)))
        }
    }

    /// Where the next page of a query starts (`CKQueryOperation.Cursor`): the server's
    /// `continuationMarker`, bound to the query and zone it came from.
    public struct Cursor: Sendable, Hashable {
        let query: Query
        let zoneID: RecordZone.ID?
        let marker: String
    }

    public var recordType: String
    public var filters: [Filter]
    public var sort: [Sort]

    public init(recordType: String, filters: [Filter] = [], sort: [Sort] = []) {
        self.recordType = recordType
        self.filters = filters
        self.sort = sort
    }

    var json: JSONValue {
        QueryCodec.encodeQuery(TandemCore.Query(recordType: recordType, filters: filters.map(\.wire), sorts: sort.map(\.wire)))
    }
}
