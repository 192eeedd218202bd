internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Zone feeds, database feeds and purging (SQLite: `SQLiteStore+Feeds.swift`). The feed clock
/// is taken by `UPDATE … RETURNING` on its one row, like a zone's change sequence, so ticks
/// commit in their order (decisions P4).
extension PostgresStoreTransaction {
    // MARK: Zone feeds

    func zoneChangePage(zone: StoredZone, after sequence: Int64, limit: Int, memberships: [String]?,
                        decodeFields: Bool) throws -> [(change: ZoneChange, record: Record?, membership: String?)] {
        if memberships?.isEmpty == true { return [] }
        // The share list is one text[] parameter ($3), used three times.
        var sql = """
            SELECT c.record_name, c.record_type, c.seq, c.deleted, \(RecordRows.recordColumns), r.membership
            FROM record_changes c LEFT JOIN records r ON r.zone_id = c.zone_id AND r.name = c.record_name AND c.deleted = 0
            WHERE c.zone_id = $1 AND c.seq > $2 \(memberships == nil ? "" : "AND c.membership = ANY($3::text[])")
            """
        var arguments: [PostgresValue] = [.integer(zone.key), .integer(sequence)]
        if let memberships {
            arguments.append(.textArray(memberships))
            sql += """

                UNION ALL
                SELECT e.record_name, e.record_type, e.seq, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                FROM share_exits e LEFT JOIN record_changes c ON c.zone_id = e.zone_id AND c.record_name = e.record_name
                WHERE e.zone_id = $1 AND e.seq > $2 AND e.share = ANY($3::text[])
                AND (c.membership IS NULL OR NOT (c.membership = ANY($3::text[])))
                """
        }
        arguments.append(.integer(Int64(limit)))
        sql += " ORDER BY 3 LIMIT $\(arguments.count)"
        return try db.query(sql, arguments) { try FeedRows.zoneChange($0, zoneID: zone.zoneID, decodeFields: decodeFields) }
    }

    func purgedSequence(zone: StoredZone) throws -> Int64 {
        try db.queryOne("SELECT purged_seq FROM zones WHERE id = $1", [.integer(zone.key)]) { try $0.int64(0) } ?? 0
    }

    // MARK: Database feeds

    func databaseChanges(_ owner: FeedOwner, after sequence: Int64, limit: Int) throws -> [DatabaseChange] {
        // Live zones come from the zones' own ticks; deletions and lost access from the viewer's rows.
        let live = owner.scope == .shared
            ? """
              SELECT z.id, z.name, z.owner, z.feed_seq, 0::bigint, NULL::text FROM zone_viewers v JOIN zones z ON z.id = v.zone_id
              WHERE v.viewer = $1 AND z.container_id = $2 AND z.environment = $3 AND z.feed_seq > $5
              """
            : """
              SELECT z.id, z.name, z.owner, z.feed_seq, 0::bigint, NULL::text FROM zones z
              WHERE z.owner = $1 AND z.container_id = $2 AND z.environment = $3 AND z.database = 'private' AND z.feed_seq > $5
              """
        return try db.query("""
            \(live)
            UNION ALL
            SELECT zone_id, zone_name, owner, seq, deleted, reason FROM database_changes
            WHERE viewer = $1 AND container_id = $2 AND environment = $3 AND scope = $4 AND seq > $5
            ORDER BY 4 LIMIT $6
            """, [.text(owner.viewer), .text(owner.container), .text(owner.environment.rawValue), .text(owner.scope.rawValue),
                  .integer(sequence), .integer(Int64(limit))], FeedRows.databaseChange)
    }

    func feedClock() throws -> (sequence: Int64, purged: Int64) {
        try db.queryOne("SELECT seq, purged_seq FROM feed_clock WHERE id = 1", []) { (try $0.int64(0), try $0.int64(1)) } ?? (0, 0)
    }

    func generation(accepting token: Int64?) throws -> (current: Int64, accepts: Bool) {
        try db.queryOne("""
            SELECT generation, EXISTS (SELECT 1 FROM store_generations WHERE generation = $1)::int::bigint FROM feed_clock WHERE id = 1
            """, [.integer(token ?? 0)]) { (try $0.int64(0), try $0.int64(1) != 0) } ?? (0, false)
    }

    func startGeneration(_ generation: Int64, at time: Int64, forgettingEarlier: Bool) throws {
        if forgettingEarlier { try db.run("DELETE FROM store_generations", []) }
        try db.run("UPDATE feed_clock SET generation = $1 WHERE id = 1", [.integer(generation)])
        try db.run("INSERT INTO store_generations (generation, began_at) VALUES ($1, $2)", [.integer(generation), .integer(time)])
    }

    private func tick() throws -> Int64 {
        try db.queryOne("UPDATE feed_clock SET seq = seq + 1 WHERE id = 1 RETURNING seq", []) { try $0.int64(0) } ?? 0
    }

    /// A zone gone from a viewer's database feed, at `tick`.
    private func recordRemoval(viewer: String, scope: DatabaseType, zone: StoredZone, reason: String, container: String,
                               environment: String, tick: Int64, at time: Int64) throws {
        try db.run("""
            INSERT INTO database_changes (viewer, container_id, environment, scope, zone_id, zone_name, owner, seq, deleted, reason, changed_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 1, $9, $10)
            ON CONFLICT (viewer, container_id, environment, scope, zone_id) DO UPDATE SET seq = excluded.seq, deleted = 1,
                reason = excluded.reason, changed_at = excluded.changed_at
            """, [.text(viewer), .text(container), .text(environment), .text(scope.rawValue), .integer(zone.key),
                  .text(zone.zoneID.zoneName), .text(zone.zoneID.ownerRecordName ?? ""), .integer(tick), .text(reason), .integer(time)])
    }

    @discardableResult
    func zoneActivity(_ zone: StoredZone, container: String, environment: Environment, viewersChanged: Bool, at time: Int64) throws -> [String] {
        // The feed clock's tick and the zone's place in the feeds in one round trip (P54). A
        // data-modifying WITH runs to completion whatever the outer query reads, so the clock
        // ticks even when the zone row is gone, as it did in two statements. When the viewers
        // stay, nothing needs the tick, so the statement waits for the next one (P73).
        guard viewersChanged else {
            try db.runDeferred("""
                WITH tick AS (UPDATE feed_clock SET seq = seq + 1 WHERE id = 1 RETURNING seq)
                UPDATE zones SET feed_seq = (SELECT seq FROM tick) WHERE id = $1
                """, [.integer(zone.key)])
            return []
        }
        let now = try db.queryOne("""
            WITH tick AS (UPDATE feed_clock SET seq = seq + 1 WHERE id = 1 RETURNING seq),
                 moved AS (UPDATE zones SET feed_seq = (SELECT seq FROM tick) WHERE id = $1)
            SELECT seq FROM tick
            """, [.integer(zone.key)]) { try $0.int64(0) } ?? 0
        let viewers = ZoneViewerChange(
            previous: try db.query("SELECT viewer FROM zone_viewers WHERE zone_id = $1", [.integer(zone.key)]) { try $0.string(0) },
            current: try acceptedParticipants(zone: zone))
        for viewer in viewers.departed {
            try recordRemoval(viewer: viewer, scope: .shared, zone: zone, reason: "ACCESS_LOST", container: container,
                              environment: environment.rawValue, tick: now, at: time)
            try db.run("DELETE FROM zone_viewers WHERE zone_id = $1 AND viewer = $2", [.integer(zone.key), .text(viewer)])
        }
        for viewer in viewers.arrived {
            try db.run("INSERT INTO zone_viewers (zone_id, viewer) VALUES ($1, $2)", [.integer(zone.key), .text(viewer)])
        }
        return viewers.departed
    }

    func zoneDeletedFromFeeds(_ zone: StoredZone, at time: Int64) throws {
        let now = try tick()
        guard let (container, environment) = try db.queryOne("SELECT container_id, environment FROM zones WHERE id = $1",
                                                             [.integer(zone.key)], { (try $0.string(0), try $0.string(1)) }) else { return }
        try recordRemoval(viewer: zone.zoneID.ownerRecordName ?? "", scope: .private, zone: zone, reason: "DELETED", container: container,
                          environment: environment, tick: now, at: time)
        for viewer in try db.query("SELECT viewer FROM zone_viewers WHERE zone_id = $1", [.integer(zone.key)], { try $0.string(0) }) {
            try recordRemoval(viewer: viewer, scope: .shared, zone: zone, reason: "DELETED", container: container,
                              environment: environment, tick: now, at: time)
        }
        try db.run("DELETE FROM zone_viewers WHERE zone_id = $1", [.integer(zone.key)])
    }

    @discardableResult
    func purgeChanges(olderThan time: Int64) throws -> Int {
        var removed = 0
        for table in ["record_changes", "share_exits"] {
            let condition = table == "record_changes" ? "deleted = 1 AND changed_at < $1" : "changed_at < $1"
            let gone = try db.query("DELETE FROM \(table) WHERE \(condition) RETURNING zone_id, seq", [.integer(time)]) {
                (try $0.int64(0), try $0.int64(1))
            }
            removed += gone.count
            for (zone, seq) in PurgeHorizon.perZone(gone) {
                try db.run("UPDATE zones SET purged_seq = GREATEST(purged_seq, $1) WHERE id = $2", [.integer(seq), .integer(zone)])
            }
        }
        let feedGone = try db.query("DELETE FROM database_changes WHERE deleted = 1 AND changed_at < $1 RETURNING seq", [.integer(time)]) {
            try $0.int64(0)
        }
        removed += feedGone.count
        if let top = feedGone.max() {
            try db.run("UPDATE feed_clock SET purged_seq = GREATEST(purged_seq, $1) WHERE id = 1", [.integer(top)])
        }
        return removed
    }
}
