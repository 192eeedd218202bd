internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Shares, participants, requesters, blocks and share membership (SQLite: `SQLiteStore+Shares.swift`).
extension PostgresStoreTransaction {
    func share(zone: StoredZone, recordName: String) throws -> StoredShare? {
        try db.queryOne("SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.zone_id = $1 AND s.record_name = $2",
                        [.integer(zone.key), .text(recordName)], ShareRows.share)
    }

    func shares(zone: StoredZone) throws -> [StoredShare] {
        try db.query("SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.zone_id = $1 ORDER BY s.id",
                     [.integer(zone.key)], ShareRows.share)
    }

    func share(shortGUID: String, container: String, environment: Environment) throws -> StoredShare? {
        try db.queryOne("""
            SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id
            WHERE s.short_guid = $1 AND z.container_id = $2 AND z.environment = $3
            """, [.text(shortGUID), .text(container), .text(environment.rawValue)], ShareRows.share)
    }

    func share(shortGUID: String) throws -> (share: StoredShare, container: String, environment: Environment)? {
        try db.queryOne("""
            SELECT \(ShareRows.shareColumns), z.container_id, z.environment FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.short_guid = $1
            """, [.text(shortGUID)]) { row in
            (try ShareRows.share(row), try row.string(12), Environment(rawValue: try row.string(13)) ?? .development)
        }
    }

    func shortGUID(zone: StoredZone, rootName: String) throws -> String? {
        try db.queryOne("SELECT short_guid FROM share_urls WHERE zone_id = $1 AND root_name = $2",
                        [.integer(zone.key), .text(rootName)]) { try $0.string(0) }
    }

    func participants(share: StoredShare) throws -> [StoredParticipant] {
        try db.query("SELECT \(ShareRows.participantColumns) FROM share_participants p WHERE p.share_id = $1 ORDER BY p.id",
                     [.integer(share.key)]) { try ShareRows.participant($0) }
    }

    func participations(zone: StoredZone, user: String) throws -> [Int64: StoredParticipant] {
        var result: [Int64: StoredParticipant] = [:]
        for (key, participant) in try db.query("""
            SELECT p.share_id, \(ShareRows.participantColumns) FROM share_participants p JOIN shares s ON s.id = p.share_id
            WHERE s.zone_id = $1 AND p.user_record_name = $2
            """, [.integer(zone.key), .text(user)], { (try $0.int64(0), try ShareRows.participant($0, from: 1)) }) {
            result[key] = participant
        }
        return result
    }

    func acceptedShares(user: String, container: String, environment: Environment) throws -> [(StoredShare, StoredParticipant)] {
        try db.query("""
            SELECT \(ShareRows.shareColumns), \(ShareRows.participantColumns)
            FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
            WHERE p.user_record_name = $1 AND p.status = 'ACCEPTED' AND z.container_id = $2 AND z.environment = $3
            ORDER BY z.id, s.id
            """, [.text(user), .text(container), .text(environment.rawValue)]) { row in
            (try ShareRows.share(row), try ShareRows.participant(row, from: 12))
        }
    }

    func acceptedParticipants(zone: StoredZone) throws -> [String] {
        try db.query("""
            SELECT DISTINCT p.user_record_name FROM share_participants p JOIN shares s ON s.id = p.share_id
            WHERE s.zone_id = $1 AND p.status = 'ACCEPTED' AND p.user_record_name IS NOT NULL ORDER BY 1
            """, [.integer(zone.key)]) { try $0.string(0) }
    }

    func requesters(share: StoredShare) throws -> [String] {
        try db.query("SELECT user_record_name FROM share_requesters WHERE share_id = $1 ORDER BY requested_at, user_record_name",
                     [.integer(share.key)]) { try $0.string(0) }
    }

    func blockedUsers(share: StoredShare) throws -> [String] {
        try db.query("SELECT user_record_name FROM share_blocked WHERE share_id = $1 ORDER BY blocked_at, user_record_name",
                     [.integer(share.key)]) { try $0.string(0) }
    }

    // MARK: Writing

    func putShare(_ share: StoredShare) throws -> StoredShare {
        try db.run("""
            INSERT INTO shares (zone_id, record_name, root_name, short_guid, public_permission, allows_access_requests, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET root_name = excluded.root_name, short_guid = excluded.short_guid,
                public_permission = excluded.public_permission, allows_access_requests = excluded.allows_access_requests
            """, [.integer(share.zone.key), .text(share.recordName), .optional(share.rootRecordName),
                  .text(share.shortGUID), .text(share.publicPermission.rawValue), .integer(share.allowsAccessRequests ? 1 : 0),
                  .integer(share.createdAt)])
        guard let stored = try self.share(zone: share.zone, recordName: share.recordName) else {
            throw StoreError(.internal, "share \(share.recordName) vanished")
        }
        return stored
    }

    func deleteShare(_ share: StoredShare) throws {
        let rows = try db.query("SELECT id, name, type FROM records WHERE zone_id = $1 AND membership = $2 ORDER BY id",
                                [.integer(share.zone.key), .text(share.recordName)]) {
            (id: try $0.int64(0), name: try $0.string(1), type: try $0.string(2), old: Optional(share.recordName))
        }
        try moveRecords(rows, zone: share.zone, to: nil)
        try db.run("DELETE FROM shares WHERE id = $1", [.integer(share.key)])
    }

    func mintShortGUID(zone: StoredZone, rootName: String, guid: String) throws {
        try db.run("INSERT INTO share_urls (zone_id, root_name, short_guid) VALUES ($1, $2, $3)",
                   [.integer(zone.key), .text(rootName), .text(guid)])
    }

    func putParticipant(_ participant: StoredParticipant, share: StoredShare) throws {
        try db.run("""
            INSERT INTO share_participants (share_id, participant_id, user_record_name, email, phone, role, permission, status,
                approved_requester, added_at, declined_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::bigint)
            ON CONFLICT (participant_id) DO UPDATE SET user_record_name = excluded.user_record_name, email = excluded.email,
                phone = excluded.phone, role = excluded.role, permission = excluded.permission, status = excluded.status,
                approved_requester = excluded.approved_requester, declined_at = excluded.declined_at
            """, [.integer(share.key), .text(participant.participantID), .optional(participant.userRecordName),
                  .optional(participant.email), .optional(participant.phone.map(PhoneNumbers.normalize)),
                  .text(participant.role.rawValue), .text(participant.permission.rawValue), .text(participant.status.rawValue),
                  .integer(participant.isApprovedRequester ? 1 : 0), .integer(participant.addedAt),
                  // Only a REMOVED participation can be a declined one.
                  participant.status == .removed ? .optional(participant.declinedAt) : .null])
    }

    func deleteParticipant(participantID: String) throws {
        try db.run("DELETE FROM share_participants WHERE participant_id = $1", [.text(participantID)])
    }

    func addRequester(_ user: String, share: StoredShare, at time: Int64) throws {
        try db.run("INSERT INTO share_requesters (share_id, user_record_name, requested_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                   [.integer(share.key), .text(user), .integer(time)])
    }

    func removeRequester(_ user: String, share: StoredShare) throws {
        try db.run("DELETE FROM share_requesters WHERE share_id = $1 AND user_record_name = $2", [.integer(share.key), .text(user)])
    }

    func setBlocked(_ user: String, blocked: Bool, share: StoredShare, at time: Int64) throws {
        if blocked {
            try db.run("INSERT INTO share_blocked (share_id, user_record_name, blocked_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                       [.integer(share.key), .text(user), .integer(time)])
        } else {
            try db.run("DELETE FROM share_blocked WHERE share_id = $1 AND user_record_name = $2", [.integer(share.key), .text(user)])
        }
    }

    /// Like `subtreeCTE`, but not descending into the subtree of another share's root: those
    /// records belong to that share, whatever happens above it.
    private static let membershipSubtreeCTE = """
        WITH RECURSIVE sub(id, name, share) AS (
            SELECT id, name, share FROM records WHERE zone_id = $1 AND name = $2
            UNION SELECT r.id, r.name, r.share FROM records r JOIN sub ON r.zone_id = $1 AND r.parent = sub.name AND r.share IS NULL
        )
        """

    @discardableResult
    func setMembership(zone: StoredZone, subtreeOf name: String, to membership: String?) throws -> Int {
        let rows = try db.query("""
            \(Self.membershipSubtreeCTE)
            SELECT r.id, r.name, r.type, r.membership FROM records r JOIN sub ON r.id = sub.id
            WHERE r.membership IS DISTINCT FROM $3::text ORDER BY r.id
            """, [.integer(zone.key), .text(name), .optional(membership)]) {
            (id: try $0.int64(0), name: try $0.string(1), type: try $0.string(2), old: try $0.optionalString(3))
        }
        try moveRecords(rows, zone: zone, to: membership)
        return rows.count
    }
}
