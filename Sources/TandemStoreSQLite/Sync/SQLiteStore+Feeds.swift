import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    // MARK: Zone feeds

    func zoneChangePage(zone: StoredZone, after sequence: Int64, limit: Int, memberships: [String]?,
                        decodeFields: Bool) throws -> [(change: ZoneChange, record: Record?, membership: String?)] {
        if memberships?.isEmpty == true { return [] }
        // The share list is bound as one JSON value: its length does not shape the SQL (issue 14).
        let list = "SELECT value FROM json_each(?)"
        let shares = memberships.map { [BoundValueList.jsonText($0)] } ?? []
        let filter = memberships == nil ? "" : "AND c.membership IN (\(list))"
        var sql = """
            SELECT c.record_name, c.record_type, c.seq, c.deleted, \(RecordRows.recordColumns), r.membership
            FROM record_changes c LEFT JOIN records r ON r.zone_id = c.zone_id AND r.name = c.record_name AND c.deleted = 0
            WHERE c.zone_id = ? AND c.seq > ? \(filter)
            """
        var arguments: [SQLiteValue] = [.integer(zone.key), .integer(sequence)] + shares
        if memberships != nil {
            sql += """

                UNION ALL
                SELECT e.record_name, e.record_type, e.seq, 1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
                FROM share_exits e LEFT JOIN record_changes c ON c.zone_id = e.zone_id AND c.record_name = e.record_name
                WHERE e.zone_id = ? AND e.seq > ? AND e.share IN (\(list)) AND (c.membership IS NULL OR c.membership NOT IN (\(list)))
                """
            arguments += [.integer(zone.key), .integer(sequence)] + shares + shares
        }
        sql += " ORDER BY 3 LIMIT ?"
        arguments.append(.integer(Int64(limit)))
        return try db.query(sql, arguments) { try FeedRows.zoneChange($0, zoneID: zone.zoneID, decodeFields: decodeFields) }
    }

    func purgedSequence(zone: StoredZone) throws -> Int64 {
        try db.queryOne("SELECT purged_seq FROM zones WHERE id = ?", [.integer(zone.key)]) { $0.int64(0) } ?? 0
    }

    /// Records a record's latest change (and, when it left a share, its exit from it).
    func logChange(zone: StoredZone, name: String, type: String, sequence: Int64, deleted: Bool, membership: String?,
                   previousMembership: String?, at time: Int64) throws {
        try db.run("""
            INSERT INTO record_changes (zone_id, record_name, seq, record_type, deleted, membership, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET seq = excluded.seq, record_type = excluded.record_type,
                deleted = excluded.deleted, membership = excluded.membership, changed_at = excluded.changed_at
            """, [.integer(zone.key), .text(name), .integer(sequence), .text(type), .integer(deleted ? 1 : 0),
                  membership.map(SQLiteValue.text) ?? .null, .integer(time)])
        changeLog.append(LoggedChange(zoneKey: zone.key, recordName: name, recordType: type, deleted: deleted, membership: membership,
                                      previousMembership: previousMembership == membership ? nil : previousMembership))
        if let previousMembership, previousMembership != membership {
            try db.run("""
                INSERT OR REPLACE INTO share_exits (zone_id, share, record_name, record_type, seq, changed_at) VALUES (?, ?, ?, ?, ?, ?)
                """, [.integer(zone.key), .text(previousMembership), .text(name), .text(type), .integer(sequence), .integer(time)])
        }
    }

    /// Moves records (id, name, type, old membership) to `membership`: each gets its own new
    /// zone sequence, so every viewer's feed shows the move exactly once.
    func moveRecords(_ rows: [(id: Int64, name: String, type: String, old: String?)], zone: StoredZone, to membership: String?) throws {
        guard !rows.isEmpty else { return }
        guard let last = try db.queryOne("UPDATE zones SET change_seq = change_seq + ? WHERE id = ? RETURNING change_seq",
                                         [.integer(Int64(rows.count)), .integer(zone.key)], { $0.int64(0) }) else { return }
        let base = last - Int64(rows.count)
        let now = Clock.milliseconds()
        for (index, row) in rows.enumerated() {
            try db.run("UPDATE records SET membership = ? WHERE id = ?", [membership.map(SQLiteValue.text) ?? .null, .integer(row.id)])
            try logChange(zone: zone, name: row.name, type: row.type, sequence: base + Int64(index) + 1, deleted: false,
                          membership: membership, previousMembership: row.old, at: now)
        }
    }

    // MARK: Database feeds

    func databaseChanges(_ owner: FeedOwner, after sequence: Int64, limit: Int) throws -> [DatabaseChange] {
        // Live zones come from the zones' own ticks; deletions and lost access from the viewer's rows.
        // CROSS JOIN: drive from the viewer's few zones, not from every zone of the container.
        let live = owner.scope == .shared
            ? """
              SELECT z.id, z.name, z.owner, z.feed_seq, 0, NULL FROM zone_viewers v CROSS JOIN zones z ON z.id = v.zone_id
              WHERE v.viewer = ?1 AND z.container_id = ?2 AND z.environment = ?3 AND z.feed_seq > ?5
              """
            : """
              SELECT z.id, z.name, z.owner, z.feed_seq, 0, NULL FROM zones z
              WHERE z.owner = ?1 AND z.container_id = ?2 AND z.environment = ?3 AND z.database = 'private' AND z.feed_seq > ?5
              """
        return try db.query("""
            \(live)
            UNION ALL
            SELECT zone_id, zone_name, owner, seq, deleted, reason FROM database_changes
            WHERE viewer = ?1 AND container_id = ?2 AND environment = ?3 AND scope = ?4 AND seq > ?5
            ORDER BY 4 LIMIT ?6
            """, [.text(owner.viewer), .text(owner.container), .text(owner.environment.rawValue), .text(owner.scope.rawValue),
                  .integer(sequence), .integer(Int64(limit))], FeedRows.databaseChange)
    }

    func feedClock() throws -> (sequence: Int64, purged: Int64) {
        try db.queryOne("SELECT seq, purged_seq FROM feed_clock WHERE id = 1", []) { ($0.int64(0), $0.int64(1)) } ?? (0, 0)
    }

    func generation(accepting token: Int64?) throws -> (current: Int64, accepts: Bool) {
        try db.queryOne("""
            SELECT generation, EXISTS (SELECT 1 FROM store_generations WHERE generation = ?1) FROM feed_clock WHERE id = 1
            """, [.integer(token ?? 0)]) { ($0.int64(0), $0.int64(1) != 0) } ?? (0, false)
    }

    func startGeneration(_ generation: Int64, at time: Int64, forgettingEarlier: Bool) throws {
        if forgettingEarlier { try db.run("DELETE FROM store_generations", []) }
        try db.run("UPDATE feed_clock SET generation = ? WHERE id = 1", [.integer(generation)])
        try db.run("INSERT INTO store_generations (generation, began_at) VALUES (?, ?)", [.integer(generation), .integer(time)])
    }

    private func tick() throws -> Int64 {
        try db.queryOne("UPDATE feed_clock SET seq = seq + 1 WHERE id = 1 RETURNING seq", []) { $0.int64(0) } ?? 0
    }

    /// A zone gone from a viewer's database feed, at `tick`.
    private func recordRemoval(viewer: String, scope: DatabaseType, zone: StoredZone, reason: String, container: String,
                               environment: String, tick: Int64, at time: Int64) throws {
        try db.run("""
            INSERT INTO database_changes (viewer, container_id, environment, scope, zone_id, zone_name, owner, seq, deleted, reason, changed_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)
            ON CONFLICT (viewer, container_id, environment, scope, zone_id) DO UPDATE SET seq = excluded.seq, deleted = 1,
                reason = excluded.reason, changed_at = excluded.changed_at
            """, [.text(viewer), .text(container), .text(environment), .text(scope.rawValue), .integer(zone.key),
                  .text(zone.zoneID.zoneName), .text(zone.zoneID.ownerRecordName ?? ""), .integer(tick), .text(reason), .integer(time)])
    }

    @discardableResult
    func zoneActivity(_ zone: StoredZone, container: String, environment: Environment, viewersChanged: Bool, at time: Int64) throws -> [String] {
        let now = try tick()
        try db.run("UPDATE zones SET feed_seq = ? WHERE id = ?", [.integer(now), .integer(zone.key)])
        guard viewersChanged else { return [] }
        let viewers = ZoneViewerChange(
            previous: try db.query("SELECT viewer FROM zone_viewers WHERE zone_id = ?", [.integer(zone.key)]) { $0.text(0) },
            current: try acceptedParticipants(zone: zone))
        for viewer in viewers.departed {
            try recordRemoval(viewer: viewer, scope: .shared, zone: zone, reason: "ACCESS_LOST", container: container,
                              environment: environment.rawValue, tick: now, at: time)
            try db.run("DELETE FROM zone_viewers WHERE zone_id = ? AND viewer = ?", [.integer(zone.key), .text(viewer)])
        }
        for viewer in viewers.arrived {
            try db.run("INSERT INTO zone_viewers (zone_id, viewer) VALUES (?, ?)", [.integer(zone.key), .text(viewer)])
        }
        return viewers.departed
    }

    func zoneDeletedFromFeeds(_ zone: StoredZone, at time: Int64) throws {
        let now = try tick()
        guard let (container, environment) = try db.queryOne("SELECT container_id, environment FROM zones WHERE id = ?",
                                                             [.integer(zone.key)], { ($0.text(0), $0.text(1)) }) else { return }
        try recordRemoval(viewer: zone.zoneID.ownerRecordName ?? "", scope: .private, zone: zone, reason: "DELETED", container: container,
                          environment: environment, tick: now, at: time)
        for viewer in try db.query("SELECT viewer FROM zone_viewers WHERE zone_id = ?", [.integer(zone.key)], { $0.text(0) }) {
            try recordRemoval(viewer: viewer, scope: .shared, zone: zone, reason: "DELETED", container: container,
                              environment: environment, tick: now, at: time)
        }
        try db.run("DELETE FROM zone_viewers WHERE zone_id = ?", [.integer(zone.key)])
    }

    @discardableResult
    func purgeChanges(olderThan time: Int64) throws -> Int {
        var removed = 0
        for table in ["record_changes", "share_exits"] {
            let condition = table == "record_changes" ? "deleted = 1 AND changed_at < ?" : "changed_at < ?"
            let gone = try db.query("DELETE FROM \(table) WHERE \(condition) RETURNING zone_id, seq", [.integer(time)]) { ($0.int64(0), $0.int64(1)) }
            removed += gone.count
            for (zone, seq) in PurgeHorizon.perZone(gone) {
                try db.run("UPDATE zones SET purged_seq = MAX(purged_seq, ?) WHERE id = ?", [.integer(seq), .integer(zone)])
            }
        }
        let feedGone = try db.query("DELETE FROM database_changes WHERE deleted = 1 AND changed_at < ? RETURNING seq", [.integer(time)]) { $0.int64(0) }
        removed += feedGone.count
        if let top = feedGone.max() {
            try db.run("UPDATE feed_clock SET purged_seq = MAX(purged_seq, ?) WHERE id = 1", [.integer(top)])
        }
        return removed
    }
}
