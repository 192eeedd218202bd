internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Profiles, sign-in methods, consents and emailed links (SQLite: the account half of
/// `SQLiteStore+SignIn.swift`; its token half is `PostgresStore+Sessions.swift`).
extension PostgresStoreTransaction {
    static let profileColumns = "record_name, email, email_verified, display_name, created_at"

    static func profile(_ row: PostgresRow) throws -> AccountProfile {
        AccountProfile(recordName: try row.string(0), email: try row.optionalString(1), emailVerified: try row.int64(2) != 0,
                       displayName: try row.optionalString(3), createdAt: try row.int64(4))
    }

    func profile(user: String) throws -> AccountProfile? {
        try db.queryOne("SELECT \(Self.profileColumns) FROM users WHERE record_name = $1", [.text(user)], Self.profile)
    }

    func profiles(limit: Int) throws -> [AccountProfile] {
        try db.query("SELECT \(Self.profileColumns) FROM users ORDER BY id LIMIT $1", [.integer(Int64(limit))], Self.profile)
    }

    private static let signInMethodColumns = "kind, subject, secret, created_at, last_used_at"

    private static func signInMethod(_ row: PostgresRow, from index: Int = 0) throws -> StoredSignInMethod {
        StoredSignInMethod(kind: try row.string(index), subject: try row.string(index + 1), secret: try row.string(index + 2),
                           createdAt: try row.int64(index + 3), lastUsedAt: try row.optionalInt64(index + 4))
    }

    func signInMethods(user: String) throws -> [StoredSignInMethod] {
        try db.query("""
            SELECT \(Self.signInMethodColumns) FROM sign_in_methods WHERE user_record_name = $1 ORDER BY created_at, kind, subject
            """, [.text(user)]) { try Self.signInMethod($0) }
    }

    func signInMethod(kind: String, subject: String) throws -> (user: String, method: StoredSignInMethod)? {
        try db.queryOne("""
            SELECT user_record_name, \(Self.signInMethodColumns) FROM sign_in_methods WHERE kind = $1 AND subject = $2
            """, [.text(kind), .text(subject)]) { (try $0.string(0), try Self.signInMethod($0, from: 1)) }
    }

    func hasConsent(user: String, container: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM container_consents WHERE user_record_name = $1 AND container_id = $2",
                        [.text(user), .text(container)]) { _ in true } ?? false
    }

    private static let accountLinkColumns = """
        hash, purpose, email, user_record_name, display_name, pending_secret, created_at, expires_at, used_at
        """

    private static func accountLink(_ row: PostgresRow) throws -> AccountLink {
        AccountLink(hash: try row.bytes(0), purpose: AccountLink.Purpose(rawValue: try row.string(1)) ?? .reset, email: try row.string(2),
                    userRecordName: try row.optionalString(3), displayName: try row.optionalString(4),
                    pendingSecret: try row.optionalString(5), createdAt: try row.int64(6), expiresAt: try row.int64(7),
                    usedAt: try row.optionalInt64(8))
    }

    func accountLink(hash: [UInt8]) throws -> AccountLink? {
        try db.queryOne("SELECT \(Self.accountLinkColumns) FROM account_links WHERE hash = $1", [.bytes(hash)], Self.accountLink)
    }

    func newestAccountLink(email: String, purpose: AccountLink.Purpose, at time: Int64) throws -> AccountLink? {
        try db.queryOne("""
            SELECT \(Self.accountLinkColumns) FROM account_links
            WHERE tandem_fold(email) = tandem_fold($1) AND purpose = $2 AND used_at IS NULL AND expires_at > $3 ORDER BY created_at DESC LIMIT 1
            """, [.text(email), .text(purpose.rawValue), .integer(time)], Self.accountLink)
    }

    func addVerifiedUser(email: String, displayName: String?, at time: Int64) throws -> UserAccount {
        let user = try addUser(email: email, givenName: displayName, familyName: nil, phoneNumber: nil, at: time)
        try db.run("UPDATE users SET email_verified = 1, display_name = $1 WHERE record_name = $2",
                   [.optional(displayName), .text(user.recordName)])
        return user
    }

    func setEmailVerified(user: String, _ verified: Bool) throws {
        try db.run("UPDATE users SET email_verified = $1 WHERE record_name = $2", [.integer(verified ? 1 : 0), .text(user)])
    }

    func putSignInMethod(user: String, _ method: StoredSignInMethod) throws {
        try db.run("""
            INSERT INTO sign_in_methods (user_record_name, kind, subject, secret, created_at, last_used_at) VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (user_record_name, kind, subject) DO UPDATE SET secret = EXCLUDED.secret
            """, [.text(user), .text(method.kind), .text(method.subject), .text(method.secret), .integer(method.createdAt),
                  .optional(method.lastUsedAt)])
    }

    func touchSignInMethod(user: String, kind: String, subject: String, at time: Int64) throws {
        try db.run("UPDATE sign_in_methods SET last_used_at = $1 WHERE user_record_name = $2 AND kind = $3 AND subject = $4",
                   [.integer(time), .text(user), .text(kind), .text(subject)])
    }

    func addConsent(user: String, container: String, at time: Int64) throws {
        try db.run("""
            INSERT INTO container_consents (user_record_name, container_id, granted_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
            """, [.text(user), .text(container), .integer(time)])
    }

    func addAccountLink(_ link: AccountLink) throws {
        // Expired links are forgotten as new ones are made.
        try db.run("DELETE FROM account_links WHERE expires_at < $1", [.integer(link.createdAt)])
        try db.run("""
            INSERT INTO account_links (hash, purpose, email, user_record_name, display_name, pending_secret, created_at, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
            """, [.bytes(link.hash), .text(link.purpose.rawValue), .text(link.email), .optional(link.userRecordName),
                  .optional(link.displayName), .optional(link.pendingSecret), .integer(link.createdAt), .integer(link.expiresAt)])
    }

    func useAccountLink(hash: [UInt8], at time: Int64) throws -> Bool {
        let used = try db.run("UPDATE account_links SET used_at = $1 WHERE hash = $2 AND used_at IS NULL AND expires_at > $1",
                              [.integer(time), .bytes(hash)])
        guard used > 0 else { return false }
        // Rival and older links of the same purpose for the same address go with it.
        try db.run("""
            UPDATE account_links SET used_at = $1 WHERE used_at IS NULL
            AND (tandem_fold(email), purpose) = (SELECT tandem_fold(email), purpose FROM account_links WHERE hash = $2)
            """, [.integer(time), .bytes(hash)])
        return true
    }
}
