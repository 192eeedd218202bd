import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func share(zone: StoredZone, recordName: String) throws -> StoredShare? {
        try db.queryOne("SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.zone_id = ? AND s.record_name = ?",
                        [.integer(zone.key), .text(recordName)], ShareRows.share)
    }

    func shares(zone: StoredZone) throws -> [StoredShare] {
        try db.query("SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.zone_id = ? ORDER BY s.id",
                     [.integer(zone.key)], ShareRows.share)
    }

    func share(shortGUID: String, container: String, environment: Environment) throws -> StoredShare? {
        try db.queryOne("""
            SELECT \(ShareRows.shareColumns) FROM shares s JOIN zones z ON z.id = s.zone_id
            WHERE s.short_guid = ? AND z.container_id = ? AND z.environment = ?
            """, [.text(shortGUID), .text(container), .text(environment.rawValue)], ShareRows.share)
    }

    func share(shortGUID: String) throws -> (share: StoredShare, container: String, environment: Environment)? {
        try db.queryOne("SELECT \(ShareRows.shareColumns), z.container_id, z.environment FROM shares s JOIN zones z ON z.id = s.zone_id WHERE s.short_guid = ?",
                        [.text(shortGUID)]) { row in
            (try ShareRows.share(row), row.text(12), Environment(rawValue: row.text(13)) ?? .development)
        }
    }

    func shortGUID(zone: StoredZone, rootName: String) throws -> String? {
        try db.queryOne("SELECT short_guid FROM share_urls WHERE zone_id = ? AND root_name = ?",
                        [.integer(zone.key), .text(rootName)]) { $0.text(0) }
    }

    func participants(share: StoredShare) throws -> [StoredParticipant] {
        try db.query("SELECT \(ShareRows.participantColumns) FROM share_participants p WHERE p.share_id = ? ORDER BY p.id",
                     [.integer(share.key)]) { try ShareRows.participant($0) }
    }

    func participations(zone: StoredZone, user: String) throws -> [Int64: StoredParticipant] {
        var result: [Int64: StoredParticipant] = [:]
        for (key, participant) in try db.query("""
            SELECT p.share_id, \(ShareRows.participantColumns) FROM share_participants p JOIN shares s ON s.id = p.share_id
            WHERE s.zone_id = ? AND p.user_record_name = ?
            """, [.integer(zone.key), .text(user)], { ($0.int64(0), try ShareRows.participant($0, from: 1)) }) {
            result[key] = participant
        }
        return result
    }

    func acceptedShares(user: String, container: String, environment: Environment) throws -> [(StoredShare, StoredParticipant)] {
        try db.query("""
            SELECT \(ShareRows.shareColumns), \(ShareRows.participantColumns)
            FROM share_participants p JOIN shares s ON s.id = p.share_id JOIN zones z ON z.id = s.zone_id
            WHERE p.user_record_name = ? AND p.status = 'ACCEPTED' AND z.container_id = ? AND z.environment = ?
            ORDER BY z.id, s.id
            """, [.text(user), .text(container), .text(environment.rawValue)]) { row in
            (try ShareRows.share(row), try ShareRows.participant(row, from: 12))
        }
    }

    func acceptedParticipants(zone: StoredZone) throws -> [String] {
        try db.query("""
            SELECT DISTINCT p.user_record_name FROM share_participants p JOIN shares s ON s.id = p.share_id
            WHERE s.zone_id = ? AND p.status = 'ACCEPTED' AND p.user_record_name IS NOT NULL
            """, [.integer(zone.key)]) { $0.text(0) }
    }

    func requesters(share: StoredShare) throws -> [String] {
        try db.query("SELECT user_record_name FROM share_requesters WHERE share_id = ? ORDER BY requested_at, user_record_name",
                     [.integer(share.key)]) { $0.text(0) }
    }

    func blockedUsers(share: StoredShare) throws -> [String] {
        try db.query("SELECT user_record_name FROM share_blocked WHERE share_id = ? ORDER BY blocked_at, user_record_name",
                     [.integer(share.key)]) { $0.text(0) }
    }

    func recordWithMembership(zone: StoredZone, name: String) throws -> (record: Record, membership: String?)? {
        try db.queryOne("SELECT \(RecordRows.recordColumns), r.membership FROM records r WHERE r.zone_id = ? AND r.name = ?",
                        [.integer(zone.key), .text(name)]) { (try RecordRows.record($0, zoneID: zone.zoneID), Self.optionalText($0, 12)) }
    }

    /// Records below `name` through `parent`, `name` included; UNION stops at cycles.
    private static let subtreeCTE = """
        WITH RECURSIVE sub(id, name, share) AS (
            SELECT id, name, share FROM records WHERE zone_id = ?1 AND name = ?2
            UNION SELECT r.id, r.name, r.share FROM records r JOIN sub ON r.zone_id = ?1 AND r.parent = sub.name
        )
        """

    /// Like `subtreeCTE`, but not descending into the subtree of another share's root: those
    /// records belong to that share, whatever happens above it.
    private static let membershipSubtreeCTE = """
        WITH RECURSIVE sub(id, name, share) AS (
            SELECT id, name, share FROM records WHERE zone_id = ?1 AND name = ?2
            UNION SELECT r.id, r.name, r.share FROM records r JOIN sub ON r.zone_id = ?1 AND r.parent = sub.name AND r.share IS NULL
        )
        """

    func subtree(zone: StoredZone, of name: String) throws -> (count: Int, shareRoots: [String]) {
        let rows = try db.query("\(Self.subtreeCTE) SELECT name, share IS NOT NULL FROM sub", [.integer(zone.key), .text(name)]) {
            ($0.text(0), $0.int64(1) != 0)
        }
        return (rows.count, rows.filter(\.1).map(\.0))
    }

    func ancestors(zone: StoredZone, of name: String, limit: Int) throws -> [String] {
        try ParentChain.ancestors(of: name, limit: limit) { child in
            try db.queryOne("SELECT parent FROM records WHERE zone_id = ? AND name = ?",
                            [.integer(zone.key), .text(child)], { Self.optionalText($0, 0) }) ?? nil
        }
    }

    func user(matching lookup: UserIdentity) throws -> UserAccount? {
        if let name = lookup.userRecordName {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE record_name = ?", [.text(name)], Self.userAccount)
        }
        if let email = lookup.emailAddress {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE email = ?", [.text(email)], Self.userAccount)
        }
        if let phone = lookup.phoneNumber {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE phone = ?",
                                   [.text(PhoneNumbers.normalize(phone))], Self.userAccount)
        }
        return nil
    }

    func sharingPartners(of user: String, container: String, environment: Environment) throws -> [UserAccount] {
        try db.query("""
            WITH mine(share_id) AS (
                SELECT p.share_id FROM share_participants p WHERE p.user_record_name = ?1 AND p.status = 'ACCEPTED'
                UNION SELECT s.id FROM shares s JOIN zones z ON z.id = s.zone_id WHERE z.owner = ?1
            ), people(name) AS (
                SELECT p.user_record_name FROM share_participants p JOIN mine USING (share_id)
                WHERE p.status = 'ACCEPTED' AND p.user_record_name IS NOT NULL
                UNION SELECT z.owner FROM mine JOIN shares s ON s.id = mine.share_id JOIN zones z ON z.id = s.zone_id
                WHERE z.container_id = ?2 AND z.environment = ?3
            )
            SELECT \(Self.userColumns) FROM users JOIN people ON people.name = users.record_name
            WHERE users.record_name <> ?1 ORDER BY users.record_name
            """, [.text(user), .text(container), .text(environment.rawValue)], Self.userAccount)
    }

    // MARK: Writing

    func putShare(_ share: StoredShare) throws -> StoredShare {
        try db.run("""
            INSERT INTO shares (zone_id, record_name, root_name, short_guid, public_permission, allows_access_requests, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (zone_id, record_name) DO UPDATE SET root_name = excluded.root_name, short_guid = excluded.short_guid,
                public_permission = excluded.public_permission, allows_access_requests = excluded.allows_access_requests
            """, [.integer(share.zone.key), .text(share.recordName), share.rootRecordName.map(SQLiteValue.text) ?? .null,
                  .text(share.shortGUID), .text(share.publicPermission.rawValue), .integer(share.allowsAccessRequests ? 1 : 0),
                  .integer(share.createdAt)])
        guard let stored = try self.share(zone: share.zone, recordName: share.recordName) else {
            throw SQLiteError(code: .notfound, message: "share \(share.recordName) vanished", sql: nil)
        }
        return stored
    }

    func deleteShare(_ share: StoredShare) throws {
        let rows = try db.query("SELECT id, name, type FROM records WHERE zone_id = ? AND membership = ?",
                                [.integer(share.zone.key), .text(share.recordName)]) { ($0.int64(0), $0.text(1), $0.text(2), Optional(share.recordName)) }
        try moveRecords(rows.map { (id: $0.0, name: $0.1, type: $0.2, old: $0.3) }, zone: share.zone, to: nil)
        try db.run("DELETE FROM shares WHERE id = ?", [.integer(share.key)])
    }

    func mintShortGUID(zone: StoredZone, rootName: String, guid: String) throws {
        try db.run("INSERT INTO share_urls (zone_id, root_name, short_guid) VALUES (?, ?, ?)",
                   [.integer(zone.key), .text(rootName), .text(guid)])
    }

    func putParticipant(_ participant: StoredParticipant, share: StoredShare) throws {
        try db.run("""
            INSERT INTO share_participants (share_id, participant_id, user_record_name, email, phone, role, permission, status,
                approved_requester, added_at, declined_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (participant_id) DO UPDATE SET user_record_name = excluded.user_record_name, email = excluded.email,
                phone = excluded.phone, role = excluded.role, permission = excluded.permission, status = excluded.status,
                approved_requester = excluded.approved_requester, declined_at = excluded.declined_at
            """, [.integer(share.key), .text(participant.participantID), participant.userRecordName.map(SQLiteValue.text) ?? .null,
                  participant.email.map(SQLiteValue.text) ?? .null, participant.phone.map { .text(PhoneNumbers.normalize($0)) } ?? .null,
                  .text(participant.role.rawValue), .text(participant.permission.rawValue), .text(participant.status.rawValue),
                  .integer(participant.isApprovedRequester ? 1 : 0), .integer(participant.addedAt),
                  // Only a REMOVED participation can be a declined one.
                  participant.status == .removed ? participant.declinedAt.map(SQLiteValue.integer) ?? .null : .null])
    }

    func deleteParticipant(participantID: String) throws {
        try db.run("DELETE FROM share_participants WHERE participant_id = ?", [.text(participantID)])
    }

    func addRequester(_ user: String, share: StoredShare, at time: Int64) throws {
        try db.run("INSERT OR IGNORE INTO share_requesters (share_id, user_record_name, requested_at) VALUES (?, ?, ?)",
                   [.integer(share.key), .text(user), .integer(time)])
    }

    func removeRequester(_ user: String, share: StoredShare) throws {
        try db.run("DELETE FROM share_requesters WHERE share_id = ? AND user_record_name = ?", [.integer(share.key), .text(user)])
    }

    func setBlocked(_ user: String, blocked: Bool, share: StoredShare, at time: Int64) throws {
        if blocked {
            try db.run("INSERT OR IGNORE INTO share_blocked (share_id, user_record_name, blocked_at) VALUES (?, ?, ?)",
                       [.integer(share.key), .text(user), .integer(time)])
        } else {
            try db.run("DELETE FROM share_blocked WHERE share_id = ? AND user_record_name = ?", [.integer(share.key), .text(user)])
        }
    }

    @discardableResult
    func setMembership(zone: StoredZone, subtreeOf name: String, to membership: String?) throws -> Int {
        let rows = try db.query("""
            \(Self.membershipSubtreeCTE)
            SELECT r.id, r.name, r.type, r.membership FROM records r JOIN sub ON r.id = sub.id WHERE r.membership IS NOT ?3
            """, [.integer(zone.key), .text(name), membership.map(SQLiteValue.text) ?? .null]) {
            (id: $0.int64(0), name: $0.text(1), type: $0.text(2), old: Self.optionalText($0, 3))
        }
        try moveRecords(rows, zone: zone, to: membership)
        return rows.count
    }

    func linkInvitations(user: UserAccount) throws {
        if let email = user.email {
            try db.run("UPDATE share_participants SET user_record_name = ? WHERE user_record_name IS NULL AND email = ?",
                       [.text(user.recordName), .text(email)])
        }
        if let phone = user.phoneNumber {
            try db.run("UPDATE share_participants SET user_record_name = ? WHERE user_record_name IS NULL AND phone = ?",
                       [.text(user.recordName), .text(PhoneNumbers.normalize(phone))])
        }
    }

    func setDiscoverable(user: String, _ discoverable: Bool) throws {
        try db.run("UPDATE users SET discoverable = ? WHERE record_name = ?", [.integer(discoverable ? 1 : 0), .text(user)])
    }
}
