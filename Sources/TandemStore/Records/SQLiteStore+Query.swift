import TandemCore
import TandemSQLite

extension SQLiteStoreTransaction {
    func query(_ query: Query, zones: [StoredZone], limit: Int, offset: Int, memberships: [String]?) throws -> [Record] {
        // Planning validates the query, so a bad one is refused even where there is nothing to search.
        let ordered = try zones.first.map { try orderedFields(zoneKey: $0.key, recordType: query.recordType) } ?? []
        let plan = try QueryPlanner(query: query, zoneKeys: zones.isEmpty ? [-1] : zones.map(\.key), limit: limit, offset: offset,
                                    memberships: memberships, orderedFields: ordered)
        guard !zones.isEmpty, memberships?.isEmpty != true else { return [] }
        let zoneIDs = Dictionary(uniqueKeysWithValues: zones.map { ($0.key, $0.zoneID) })
        return try db.query(plan.sql, plan.arguments) { row in
            Self.record(row, zoneID: zoneIDs[row.int64(12)] ?? zones[0].zoneID)
        }
    }
}
