import TandemCore

extension SQLiteStoreTransaction {
    func query(_ query: Query, zones: [StoredZone], limit: Int, offset: Int) throws -> [Record] {
        guard !zones.isEmpty else { return [] }
        let plan = try QueryPlanner(query: query, zoneKeys: zones.map(\.key), limit: limit, offset: offset)
        let zoneIDs = Dictionary(uniqueKeysWithValues: zones.map { ($0.key, $0.zoneID) })
        return try db.query(plan.sql, plan.arguments) { row in
            Self.record(row, zoneID: zoneIDs[row.int64(12)] ?? zones[0].zoneID)
        }
    }
}
