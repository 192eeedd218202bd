import TandemCore
import TandemStore

/// The schema's say over a query, in one call for `RecordService`: the index rules
/// (`QueryRules`), then, in the public database, the grants (`PublicGrants`).
enum SchemaGate {
    /// The query to run.
    /// - Throws: `BAD_REQUEST` for a field without the index the query needs; `ACCESS_DENIED`
    ///   when the caller may not read the record type.
    static func query(_ query: Query, _ reader: any StoreReading, scope: RequestScope) throws -> Query {
        try QueryRules.check(query, reader, scope: scope.database)
        guard scope.database.database == .public else { return query }
        return try PublicGrants.readable(query, reader, scope: scope)
    }
}
