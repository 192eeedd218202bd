internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Sign-in sessions: token use, rotation chains and revocation (SQLite: the token half of
/// `SQLiteStore+SignIn.swift`).
extension PostgresStoreTransaction {
    func signedInAt(tokenHash hash: [UInt8]) throws -> Int64? {
        try db.queryOne("""
            WITH RECURSIVE chain(h, created) AS (SELECT hash, created_at FROM tokens WHERE hash = $1
                UNION SELECT t.hash, t.created_at FROM tokens t JOIN chain c ON t.successor = c.h)
            SELECT min(created) FROM chain
            """, [.bytes(hash)]) { try $0.optionalInt64(0) } ?? nil
    }

    func sessions(user: String) throws -> [StoredSession] {
        try db.query("""
            SELECT hash, container_id, created_at, device, last_used_at, expires_at, idle_ms FROM tokens
            WHERE user_record_name = $1 AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL ORDER BY created_at DESC
            """, [.text(user)]) { row in
            let session = TokenSession(device: try row.optionalString(3), lastUsedAt: try row.optionalInt64(4),
                                       expiresAt: try row.optionalInt64(5), idleMilliseconds: try row.optionalInt64(6))
            return StoredSession(id: Self.sessionID(try row.bytes(0)), container: try row.optionalString(1), createdAt: try row.int64(2),
                                 session: session)
        }
    }

    /// A session's public name: the first 8 bytes of its token's SHA-256, in hex.
    static func sessionID(_ hash: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(hash.prefix(8).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
    }

    func touchToken(hash: [UInt8], at time: Int64) throws {
        try db.run("UPDATE tokens SET last_used_at = $1 WHERE hash = $2", [.integer(time), .bytes(hash)])
    }

    func revokeToken(hash: [UInt8], at time: Int64) throws -> Bool {
        let revoked = try db.run("UPDATE tokens SET revoked_at = $1 WHERE hash = $2 AND revoked_at IS NULL",
                                 [.integer(time), .bytes(hash)]) > 0
        // The token that replaced it (a sign-out with a token in its grace period ends the session).
        try db.run("""
            WITH RECURSIVE chain(h) AS (SELECT successor FROM tokens WHERE hash = $1 AND successor IS NOT NULL
                UNION SELECT t.successor FROM tokens t JOIN chain c ON t.hash = c.h WHERE t.successor IS NOT NULL)
            UPDATE tokens SET revoked_at = $2 WHERE hash IN (SELECT h FROM chain) AND revoked_at IS NULL
            """, [.bytes(hash), .integer(time)])
        try revokePredecessors(of: hash, at: time)
        return revoked
    }

    /// Revokes the tokens `hash` replaced (rotation, A13) that are still in their grace period.
    private func revokePredecessors(of hash: [UInt8], at time: Int64) throws {
        try db.run("""
            WITH RECURSIVE chain(h) AS (SELECT hash FROM tokens WHERE successor = $1
                UNION SELECT t.hash FROM tokens t JOIN chain c ON t.successor = c.h)
            UPDATE tokens SET revoked_at = $2 WHERE hash IN (SELECT h FROM chain) AND revoked_at IS NULL
            """, [.bytes(hash), .integer(time)])
    }

    func revokeSessions(user: String, id: String?, at time: Int64) throws -> Int {
        if let id {
            guard let hash = try db.queryOne("""
                SELECT hash FROM tokens WHERE user_record_name = $1 AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
                AND encode(substring(hash FROM 1 FOR 8), 'hex') = $2
                """, [.text(user), .text(id.lowercased())], { try $0.bytes(0) }) else { return 0 }
            try db.run("UPDATE tokens SET revoked_at = $1 WHERE hash = $2", [.integer(time), .bytes(hash)])
            try revokePredecessors(of: hash, at: time)
            return 1
        }
        let count = try db.queryOne("""
            SELECT count(*) FROM tokens WHERE user_record_name = $1 AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
            """, [.text(user)]) { try $0.int64(0) } ?? 0
        try db.run("UPDATE tokens SET revoked_at = $1 WHERE user_record_name = $2 AND kind = 'user' AND revoked_at IS NULL",
                   [.integer(time), .text(user)])
        return Int(count)
    }

    func rotateToken(hash: [UInt8], to successor: [UInt8], grant: TokenGrant, at time: Int64) throws -> Bool {
        let rotated = try db.run("""
            UPDATE tokens SET rotated_at = $1, successor = $2 WHERE hash = $3 AND rotated_at IS NULL AND revoked_at IS NULL
            """, [.integer(time), .bytes(successor), .bytes(hash)])
        guard rotated > 0 else { return false }
        try addToken(hash: successor, grant: grant, at: time)
        return true
    }
}
