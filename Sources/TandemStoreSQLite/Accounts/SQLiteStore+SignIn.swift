import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    static let profileColumns = "record_name, email, email_verified, display_name, created_at"

    static func profile(_ row: SQLiteStatement) -> AccountProfile {
        AccountProfile(recordName: row.text(0), email: optionalText(row, 1), emailVerified: row.int64(2) != 0,
                       displayName: optionalText(row, 3), createdAt: row.int64(4))
    }

    func profile(user: String) throws -> AccountProfile? {
        try db.queryOne("SELECT \(Self.profileColumns) FROM users WHERE record_name = ?", [.text(user)], Self.profile)
    }

    func profiles(limit: Int) throws -> [AccountProfile] {
        try db.query("SELECT \(Self.profileColumns) FROM users ORDER BY id LIMIT ?", [.integer(Int64(limit))], Self.profile)
    }

    func signInMethods(user: String) throws -> [StoredSignInMethod] {
        try db.query("""
            SELECT kind, subject, secret, created_at, last_used_at FROM sign_in_methods WHERE user_record_name = ?
            ORDER BY created_at, kind, subject
            """, [.text(user)]) { row in
            StoredSignInMethod(kind: row.text(0), subject: row.text(1), secret: row.text(2), createdAt: row.int64(3),
                               lastUsedAt: row.isNull(4) ? nil : row.int64(4))
        }
    }

    func signInMethod(kind: String, subject: String) throws -> (user: String, method: StoredSignInMethod)? {
        try db.queryOne("""
            SELECT user_record_name, kind, subject, secret, created_at, last_used_at FROM sign_in_methods WHERE kind = ? AND subject = ?
            """, [.text(kind), .text(subject)]) { row in
            (row.text(0), StoredSignInMethod(kind: row.text(1), subject: row.text(2), secret: row.text(3), createdAt: row.int64(4),
                                             lastUsedAt: row.isNull(5) ? nil : row.int64(5)))
        }
    }

    func hasConsent(user: String, container: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM container_consents WHERE user_record_name = ? AND container_id = ?",
                        [.text(user), .text(container)]) { _ in true } ?? false
    }

    static let accountLinkColumns = "hash, purpose, email, user_record_name, display_name, pending_secret, created_at, expires_at, used_at"

    static func accountLink(_ row: SQLiteStatement) -> AccountLink {
        AccountLink(hash: row.blob(0), purpose: AccountLink.Purpose(rawValue: row.text(1)) ?? .reset, email: row.text(2),
                    userRecordName: optionalText(row, 3), displayName: optionalText(row, 4), pendingSecret: optionalText(row, 5),
                    createdAt: row.int64(6), expiresAt: row.int64(7), usedAt: row.isNull(8) ? nil : row.int64(8))
    }

    func accountLink(hash: [UInt8]) throws -> AccountLink? {
        try db.queryOne("SELECT \(Self.accountLinkColumns) FROM account_links WHERE hash = ?", [.blob(hash)], Self.accountLink)
    }

    func newestAccountLink(email: String, purpose: AccountLink.Purpose, at time: Int64) throws -> AccountLink? {
        try db.queryOne("""
            SELECT \(Self.accountLinkColumns) FROM account_links
            WHERE email = ? AND purpose = ? AND used_at IS NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1
            """, [.text(email), .text(purpose.rawValue), .integer(time)], Self.accountLink)
    }

    func signedInAt(tokenHash hash: [UInt8]) throws -> Int64? {
        try db.queryOne("""
            WITH RECURSIVE chain(h, created) AS (SELECT hash, created_at FROM tokens WHERE hash = ?
                UNION SELECT t.hash, t.created_at FROM tokens t JOIN chain c ON t.successor = c.h)
            SELECT min(created) FROM chain
            """, [.blob(hash)]) { $0.isNull(0) ? nil : $0.int64(0) } ?? nil
    }

    func sessions(user: String) throws -> [StoredSession] {
        try db.query("""
            SELECT hash, container_id, created_at, device, last_used_at, expires_at, idle_ms FROM tokens
            WHERE user_record_name = ? AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL ORDER BY created_at DESC
            """, [.text(user)]) { row in
            let session = TokenSession(device: Self.optionalText(row, 3), lastUsedAt: row.isNull(4) ? nil : row.int64(4),
                                       expiresAt: row.isNull(5) ? nil : row.int64(5), idleMilliseconds: row.isNull(6) ? nil : row.int64(6))
            return StoredSession(id: Self.sessionID(row.blob(0)), container: Self.optionalText(row, 1), createdAt: row.int64(2),
                                 session: session)
        }
    }

    /// A session's public name: the first 8 bytes of its token's SHA-256, in hex.
    static func sessionID(_ hash: [UInt8]) -> String {
        hash.prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined()
    }

    func addVerifiedUser(email: String, displayName: String?, at time: Int64) throws -> UserAccount {
        let user = try addUser(email: email, givenName: displayName, familyName: nil, phoneNumber: nil, at: time)
        try db.run("UPDATE users SET email_verified = 1, display_name = ? WHERE record_name = ?",
                   [displayName.map(SQLiteValue.text) ?? .null, .text(user.recordName)])
        return user
    }

    func setEmailVerified(user: String, _ verified: Bool) throws {
        try db.run("UPDATE users SET email_verified = ? WHERE record_name = ?", [.integer(verified ? 1 : 0), .text(user)])
    }

    func putSignInMethod(user: String, _ method: StoredSignInMethod) throws {
        try db.run("""
            INSERT INTO sign_in_methods (user_record_name, kind, subject, secret, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (user_record_name, kind, subject) DO UPDATE SET secret = excluded.secret
            """, [.text(user), .text(method.kind), .text(method.subject), .text(method.secret), .integer(method.createdAt),
                  method.lastUsedAt.map(SQLiteValue.integer) ?? .null])
    }

    func touchSignInMethod(user: String, kind: String, subject: String, at time: Int64) throws {
        try db.run("UPDATE sign_in_methods SET last_used_at = ? WHERE user_record_name = ? AND kind = ? AND subject = ?",
                   [.integer(time), .text(user), .text(kind), .text(subject)])
    }

    func addConsent(user: String, container: String, at time: Int64) throws {
        try db.run("INSERT OR IGNORE INTO container_consents (user_record_name, container_id, granted_at) VALUES (?, ?, ?)",
                   [.text(user), .text(container), .integer(time)])
    }

    func addAccountLink(_ link: AccountLink) throws {
        // Expired links are forgotten as new ones are made.
        try db.run("DELETE FROM account_links WHERE expires_at < ?", [.integer(link.createdAt)])
        try db.run("""
            INSERT INTO account_links (hash, purpose, email, user_record_name, display_name, pending_secret, created_at, expires_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """, [.blob(link.hash), .text(link.purpose.rawValue), .text(link.email), link.userRecordName.map(SQLiteValue.text) ?? .null,
                  link.displayName.map(SQLiteValue.text) ?? .null, link.pendingSecret.map(SQLiteValue.text) ?? .null,
                  .integer(link.createdAt), .integer(link.expiresAt)])
    }

    func useAccountLink(hash: [UInt8], at time: Int64) throws -> Bool {
        try db.run("UPDATE account_links SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?",
                   [.integer(time), .blob(hash), .integer(time)])
        guard db.changes > 0 else { return false }
        try db.run("""
            UPDATE account_links SET used_at = ? WHERE used_at IS NULL
            AND (email, purpose) = (SELECT email, purpose FROM account_links WHERE hash = ?)
            """, [.integer(time), .blob(hash)])
        return true
    }

    func touchToken(hash: [UInt8], at time: Int64) throws {
        try db.run("UPDATE tokens SET last_used_at = ? WHERE hash = ?", [.integer(time), .blob(hash)])
    }

    func revokeToken(hash: [UInt8], at time: Int64) throws -> Bool {
        try db.run("UPDATE tokens SET revoked_at = ? WHERE hash = ? AND revoked_at IS NULL", [.integer(time), .blob(hash)])
        let revoked = db.changes > 0
        // The token that replaced it (a sign-out with a token in its grace period ends the session).
        try db.run("""
            WITH RECURSIVE chain(h) AS (SELECT successor FROM tokens WHERE hash = ? AND successor IS NOT NULL
                UNION SELECT t.successor FROM tokens t JOIN chain c ON t.hash = c.h WHERE t.successor IS NOT NULL)
            UPDATE tokens SET revoked_at = ? WHERE hash IN chain AND revoked_at IS NULL
            """, [.blob(hash), .integer(time)])
        try revokePredecessors(of: hash, at: time)
        return revoked
    }

    /// Revokes the tokens `hash` replaced (rotation, A13) that are still in their grace period.
    private func revokePredecessors(of hash: [UInt8], at time: Int64) throws {
        try db.run("""
            WITH RECURSIVE chain(h) AS (SELECT hash FROM tokens WHERE successor = ?
                UNION SELECT t.hash FROM tokens t JOIN chain c ON t.successor = c.h)
            UPDATE tokens SET revoked_at = ? WHERE hash IN chain AND revoked_at IS NULL
            """, [.blob(hash), .integer(time)])
    }

    func revokeSessions(user: String, id: String?, at time: Int64) throws -> Int {
        if let id {
            guard let hash = try db.queryOne("""
                SELECT hash FROM tokens WHERE user_record_name = ? AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
                AND lower(hex(substr(hash, 1, 8))) = ?
                """, [.text(user), .text(id.lowercased())], { $0.blob(0) }) else { return 0 }
            try db.run("UPDATE tokens SET revoked_at = ? WHERE hash = ?", [.integer(time), .blob(hash)])
            try revokePredecessors(of: hash, at: time)
            return 1
        }
        let count = try db.queryOne("""
            SELECT count(*) FROM tokens WHERE user_record_name = ? AND kind = 'user' AND revoked_at IS NULL AND rotated_at IS NULL
            """, [.text(user)]) { $0.int64(0) } ?? 0
        try db.run("UPDATE tokens SET revoked_at = ? WHERE user_record_name = ? AND kind = 'user' AND revoked_at IS NULL",
                   [.integer(time), .text(user)])
        return Int(count)
    }

    func rotateToken(hash: [UInt8], to successor: [UInt8], grant: TokenGrant, at time: Int64) throws -> Bool {
        try db.run("UPDATE tokens SET rotated_at = ?, successor = ? WHERE hash = ? AND rotated_at IS NULL AND revoked_at IS NULL",
                   [.integer(time), .blob(successor), .blob(hash)])
        guard db.changes > 0 else { return false }
        try addToken(hash: successor, grant: grant, at: time)
        return true
    }
}
