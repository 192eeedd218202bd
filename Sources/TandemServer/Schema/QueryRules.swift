import TandemCore
import TandemSchema
import TandemStore

/// Which filters and sorts a record type's schema allows (CloudKit: a query on a field
/// without the index it needs is refused, never answered by a scan; DESIGN.md §4).
///
/// | Query part | Needs |
/// |---|---|
/// | `LESS_THAN`, `LESS_THAN_OR_EQUALS`, `GREATER_THAN`, `GREATER_THAN_OR_EQUALS`, `NEAR`, a sort | `SORTABLE` |
/// | `CONTAINS_ALL_TOKENS`, `CONTAINS_ANY_TOKENS` | `SEARCHABLE` |
/// | every other comparator | `QUERYABLE` |
///
/// System fields are columns with their own indexes and are always allowed. A record type or
/// field the schema does not have is refused in production; in development it is allowed,
/// because its first write will add it with every index (decision SC2).
enum QueryRules {
    static func check(_ query: Query, _ reader: any StoreReading, scope: DatabaseScope) throws {
        guard query.recordType != Share.recordType else { return }
        let schema = try SchemaRegistry.shared.schema(reader, container: scope.container, environment: scope.environment)
        try check(query, schema: schema, environment: scope.environment)
    }

    static func check(_ query: Query, schema: Schema?, environment: Environment) throws(CloudKitError) {
        let production = environment == .production
        guard let type = schema?.recordType(named: query.recordType) else {
            if production { throw .badRequest("record type '\(query.recordType)' is not in the production schema") }
            return
        }
        func require(_ option: FieldOptions, _ keyword: String, field name: String) throws(CloudKitError) {
            guard let field = type.fields.first(where: { $0.name == name }) else {
                if production { throw .badRequest("record type '\(type.name)' has no field '\(name)' in the production schema") }
                return
            }
            guard field.options.contains(option) else {
                throw .badRequest("field '\(name)' of record type '\(type.name)' is not marked \(keyword)")
            }
        }
        for filter in query.filters {
            guard case .user(let name) = filter.field else { continue }
            switch filter.comparator {
            case .lessThan, .lessThanOrEquals, .greaterThan, .greaterThanOrEquals, .near:
                try require(.sortable, "sortable", field: name)
            case .containsAllTokens, .containsAnyTokens:
                try require(.searchable, "searchable", field: name)
            default:
                try require(.queryable, "queryable", field: name)
            }
        }
        for sort in query.sorts {
            guard case .user(let name) = sort.field else { continue }
            try require(.sortable, "sortable", field: name)
        }
    }
}
