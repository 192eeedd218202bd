internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Server administrators, console sessions and the console's lists (SQLite: `SQLiteStore+Console.swift`).
extension PostgresStoreTransaction {
    func hasServerAdmin() throws -> Bool {
        try db.queryOne("SELECT 1 FROM users WHERE server_admin = 1 AND deleted_at IS NULL LIMIT 1", []) { _ in true } ?? false
    }

    func isServerAdmin(user: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM users WHERE record_name = $1 AND server_admin = 1 AND deleted_at IS NULL", [.text(user)]) { _ in true } ?? false
    }

    func serverAdmins() throws -> [AccountProfile] {
        try db.query("SELECT \(Self.profileColumns) FROM users WHERE server_admin = 1 AND deleted_at IS NULL ORDER BY id", [], Self.profile)
    }

    func setServerAdmin(user: String, _ on: Bool) throws {
        try db.run("UPDATE users SET server_admin = $1 WHERE record_name = $2", [.integer(on ? 1 : 0), .text(user)])
    }

    func consoleSession(hash: [UInt8]) throws -> ConsoleSession? {
        try db.queryOne("""
            SELECT user_record_name, created_at, last_used_at, expires_at, idle_ms, revoked_at FROM console_sessions WHERE hash = $1
            """, [.bytes(hash)]) { row in
            ConsoleSession(id: Self.sessionID(hash), user: try row.string(0), createdAt: try row.int64(1), lastUsedAt: try row.int64(2),
                           expiresAt: try row.int64(3), idleMilliseconds: try row.int64(4), revokedAt: try row.optionalInt64(5))
        }
    }

    func addConsoleSession(hash: [UInt8], user: String, at time: Int64, expiresAt: Int64, idleMilliseconds: Int64) throws {
        try db.run("""
            INSERT INTO console_sessions (hash, user_record_name, created_at, last_used_at, expires_at, idle_ms) VALUES ($1, $2, $3, $3, $4, $5)
            """, [.bytes(hash), .text(user), .integer(time), .integer(expiresAt), .integer(idleMilliseconds)])
    }

    func touchConsoleSession(hash: [UInt8], at time: Int64) throws {
        // Only forward: a late, older touch does not move the idle limit back.
        try db.run("UPDATE console_sessions SET last_used_at = $1 WHERE hash = $2 AND last_used_at < $1", [.integer(time), .bytes(hash)])
    }

    func revokeConsoleSession(hash: [UInt8], at time: Int64) throws -> Bool {
        try db.run("UPDATE console_sessions SET revoked_at = $1 WHERE hash = $2 AND revoked_at IS NULL", [.integer(time), .bytes(hash)]) > 0
    }

    func containers() throws -> [ContainerSummary] {
        let zoneCounts = try db.query("SELECT container_id, environment, count(*) FROM zones GROUP BY container_id, environment", []) { row in
            (container: try row.string(0), environment: try row.string(1), count: Int(try row.int64(2)))
        }
        let containers = try db.query("SELECT id, created_at FROM containers ORDER BY id", []) { row in
            (id: try row.string(0), createdAt: try row.int64(1))
        }
        return ContainerSummary.list(containers: containers, zoneCounts: zoneCounts)
    }

    func apiTokens(container: String) throws -> [StoredAPIToken] {
        try db.query("""
            SELECT hash, origins, callback, created_at, revoked_at FROM tokens WHERE kind = 'api' AND container_id = $1 ORDER BY created_at, hash
            """, [.text(container)]) { row in
            StoredAPIToken(id: Self.sessionID(try row.bytes(0)), container: container, origins: try row.optionalString(1).map(StoredLines.split) ?? [],
                           callback: try row.optionalString(2), createdAt: try row.int64(3), revokedAt: try row.optionalInt64(4))
        }
    }

    func revokeAPIToken(container: String, id: String, at time: Int64) throws -> Bool {
        // IDs are 16 hex digits of the hash: the prefix is matched on the bytes' hex form.
        try db.run("""
            UPDATE tokens SET revoked_at = $1
            WHERE kind = 'api' AND container_id = $2 AND revoked_at IS NULL AND encode(substring(hash FROM 1 FOR 8), 'hex') = $3
            """, [.integer(time), .text(container), .text(id.lowercased())]) > 0
    }

    func searchProfiles(_ text: String, limit: Int) throws -> [AccountProfile] {
        // SQLite's LIKE folds ASCII letters only; ILIKE under COLLATE "C" does the same. The
        // pattern's wildcards are escaped (ProfileSearch).
        try db.query("""
            SELECT \(Self.profileColumns) FROM users WHERE deleted_at IS NULL AND ($2::text = '' OR email ILIKE $1 ESCAPE '\\'
                OR display_name ILIKE $1 ESCAPE '\\' OR given_name ILIKE $1 ESCAPE '\\' OR family_name ILIKE $1 ESCAPE '\\'
                OR record_name = $2::text)
            ORDER BY id LIMIT $3
            """, [.text(ProfileSearch.containsPattern(text)), .text(text), .integer(Int64(limit))], Self.profile)
    }

    func shareSummaries(container: String, environment: String, limit: Int) throws -> [ShareSummary] {
        try db.query("""
            SELECT s.short_guid, z.owner, u.email, z.name, s.root_name, s.public_permission, s.allows_access_requests, s.created_at,
                (SELECT count(*) FROM share_participants p WHERE p.share_id = s.id AND p.status = 'ACCEPTED' AND p.role <> 'OWNER'),
                (SELECT count(*) FROM share_participants p WHERE p.share_id = s.id AND p.status = 'INVITED'),
                (SELECT count(*) FROM share_requesters r WHERE r.share_id = s.id)
            FROM zones z JOIN shares s ON s.zone_id = z.id LEFT JOIN users u ON u.record_name = z.owner
            WHERE z.container_id = $1 AND z.environment = $2 ORDER BY s.id DESC LIMIT $3
            """, [.text(container), .text(environment), .integer(Int64(limit))]) { row in
            ShareSummary(shortGUID: try row.string(0), owner: try row.string(1), ownerEmail: try row.optionalString(2), zoneName: try row.string(3),
                         rootName: try row.optionalString(4), publicPermission: try row.string(5), allowsAccessRequests: try row.int64(6) != 0,
                         accepted: Int(try row.int64(8)), invited: Int(try row.int64(9)), requests: Int(try row.int64(10)),
                         createdAt: try row.int64(7))
        }
    }

    func consents(user: String) throws -> [String] {
        try db.query("SELECT container_id FROM container_consents WHERE user_record_name = $1 ORDER BY container_id", [.text(user)]) {
            try $0.string(0)
        }
    }

    func sharedWithYouCounts(container: String, environment: Environment) throws -> SharedWithYouCounts {
        try db.queryOne("""
            SELECT (SELECT count(*) FROM conversations WHERE container_id = $1 AND environment = $2),
                (SELECT count(*) FROM conversations c JOIN conversation_events e ON e.conversation_id = c.id
                 WHERE c.container_id = $1 AND c.environment = $2 AND e.kind = 'message'),
                (SELECT count(*) FROM conversations c JOIN conversation_links l ON l.conversation_id = c.id
                 WHERE c.container_id = $1 AND c.environment = $2)
            """, [.text(container), .text(environment.rawValue)]) { row in
            SharedWithYouCounts(conversations: Int(try row.int64(0)), messages: Int(try row.int64(1)), links: Int(try row.int64(2)))
        } ?? SharedWithYouCounts(conversations: 0, messages: 0, links: 0)
    }
}
