internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Queries (SQLite: `SQLiteStore+Query.swift`): planned by ``PostgresQueryPlanner``.
extension PostgresStoreTransaction {
    func query(_ query: Query, zones: [StoredZone], limit: Int, after cursor: QueryCursor?,
               memberships: [String]?, decodeFields: Bool) throws -> [(record: Record, cursor: QueryCursor)] {
        // Planning validates the query, so a bad one is refused even where there is nothing to search.
        let plan = try PostgresQueryPlanner(query: query, zoneKeys: zones.map(\.key), limit: limit, after: cursor, memberships: memberships)
        guard !zones.isEmpty, memberships?.isEmpty != true else { return [] }
        let zoneIDs = Dictionary(uniqueKeysWithValues: zones.map { ($0.key, $0.zoneID) })
        let keyCount = plan.keyCount
        return try db.query(plan.sql, plan.arguments) { row in
            (try RecordRows.record(row, zoneID: zoneIDs[try row.int64(12)] ?? zones[0].zoneID, decodeFields: decodeFields),
             try PostgresQueryPlanner.cursor(row, keyCount: keyCount))
        }
    }
}
