import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func query(_ query: Query, zones: [StoredZone], limit: Int, after cursor: QueryCursor?,
               memberships: [String]?, decodeFields: Bool) throws -> [(record: Record, cursor: QueryCursor)] {
        // Planning validates the query, so a bad one is refused even where there is nothing to search.
        let ordered = try zones.first.map { try orderedFields(zoneKey: $0.key, recordType: query.recordType) } ?? []
        let plan = try QueryPlanner(query: query, zoneKeys: zones.map(\.key), limit: limit, after: cursor,
                                    memberships: memberships, orderedFields: ordered)
        guard !zones.isEmpty, memberships?.isEmpty != true else { return [] }
        let zoneIDs = Dictionary(uniqueKeysWithValues: zones.map { ($0.key, $0.zoneID) })
        let keyCount = plan.keyCount
        // Operands may hold U+0000, as on PostgreSQL, where they are escaped (P50, P62).
        return try db.allowingTextWithNUL {
            try db.query(plan.sql, plan.arguments) { row in
                (try RecordRows.record(row, zoneID: zoneIDs[row.int64(12)] ?? zones[0].zoneID, decodeFields: decodeFields), QueryPlanner.cursor(row, keyCount: keyCount))
            }
        }
    }
}
