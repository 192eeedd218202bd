internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// A record's share membership, its subtree and its ancestors through `parent` (SQLite:
/// `SQLiteStore+Shares.swift`).
extension PostgresStoreTransaction {
    func recordWithMembership(zone: StoredZone, name: String) throws -> (record: Record, membership: String?)? {
        try db.queryOne("SELECT \(RecordRows.recordColumns), r.membership FROM records r WHERE r.zone_id = $1 AND r.name = $2",
                        [.integer(zone.key), .text(name)]) { (try RecordRows.record($0, zoneID: zone.zoneID), try $0.optionalString(12)) }
    }

    /// Records below `name` through `parent`, `name` included; UNION stops at cycles.
    static let subtreeCTE = """
        WITH RECURSIVE sub(id, name, share) AS (
            SELECT id, name, share FROM records WHERE zone_id = $1 AND name = $2
            UNION SELECT r.id, r.name, r.share FROM records r JOIN sub ON r.zone_id = $1 AND r.parent = sub.name
        )
        """

    func subtree(zone: StoredZone, of name: String) throws -> (count: Int, shareRoots: [String]) {
        let rows = try db.query("\(Self.subtreeCTE) SELECT name, share IS NOT NULL FROM sub", [.integer(zone.key), .text(name)]) {
            (try $0.string(0), try $0.bool(1))
        }
        return (rows.count, rows.filter(\.1).map(\.0))
    }

    func ancestors(zone: StoredZone, of name: String, limit: Int) throws -> [String] {
        try ParentChain.ancestors(of: name, limit: limit) { child in
            try db.queryOne("SELECT parent FROM records WHERE zone_id = $1 AND name = $2",
                            [.integer(zone.key), .text(child)], { try $0.optionalString(0) }) ?? nil
        }
    }
}
