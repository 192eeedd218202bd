import TandemCore

extension SQLiteStoreTransaction {
    func containerExists(_ id: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM containers WHERE id = ?", [.text(id)]) { _ in true } ?? false
    }

    func createContainer(_ id: String, at time: Int64) throws -> Bool {
        try db.run("INSERT OR IGNORE INTO containers (id, created_at) VALUES (?, ?)", [.text(id), .integer(time)])
        return db.changes > 0
    }

    func user(recordNameOrEmail key: String) throws -> UserAccount? {
        try db.queryOne("""
            SELECT record_name, email, given_name, family_name FROM users WHERE record_name = ? OR email = ?
            """, [.text(key), .text(key)], Self.userAccount)
    }

    func addUser(email: String, givenName: String?, familyName: String?, at time: Int64) throws -> UserAccount {
        let account = UserAccount(recordName: UserRecordNames.make(), email: email, givenName: givenName, familyName: familyName)
        try db.run("""
            INSERT INTO users (record_name, email, given_name, family_name, created_at) VALUES (?, ?, ?, ?, ?)
            """, [.text(account.recordName), .text(email), givenName.map(SQLiteValue.text) ?? .null,
                  familyName.map(SQLiteValue.text) ?? .null, .integer(time)])
        return account
    }

    func addToken(hash: [UInt8], grant: TokenGrant, at time: Int64) throws {
        try db.run("INSERT INTO tokens (hash, kind, user_record_name, container_id, created_at) VALUES (?, ?, ?, ?, ?)",
                   [.blob(hash), .text(grant.kind.rawValue), grant.user.map { .text($0.recordName) } ?? .null,
                    grant.container.map(SQLiteValue.text) ?? .null, .integer(time)])
    }

    func grant(forTokenHash hash: [UInt8]) throws -> TokenGrant? {
        try db.queryOne("""
            SELECT t.kind, t.container_id, u.record_name, u.email, u.given_name, u.family_name
            FROM tokens t LEFT JOIN users u ON u.record_name = t.user_record_name WHERE t.hash = ?
            """, [.blob(hash)]) { row in
            let kind = TokenGrant.Kind(rawValue: row.text(0)) ?? .user
            let container = row.isNull(1) ? nil : row.text(1)
            let user = row.isNull(2) ? nil : UserAccount(recordName: row.text(2), email: Self.optionalText(row, 3),
                                                         givenName: Self.optionalText(row, 4), familyName: Self.optionalText(row, 5))
            return TokenGrant(kind: kind, user: user, container: container)
        }
    }

    static func userAccount(_ row: SQLiteStatement) -> UserAccount {
        UserAccount(recordName: row.text(0), email: optionalText(row, 1), givenName: optionalText(row, 2),
                    familyName: optionalText(row, 3))
    }

    static func optionalText(_ row: SQLiteStatement, _ index: Int32) -> String? {
        row.isNull(index) ? nil : row.text(index)
    }
}

/// CloudKit user record names: `_` followed by 32 lowercase hex digits.
public enum UserRecordNames {
    public static func make() -> String {
        "_" + Digest.hex(Digest.randomBytes(16))
    }
}
