import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func containerExists(_ id: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM containers WHERE id = ?", [.text(id)]) { _ in true } ?? false
    }

    func createContainer(_ id: String, at time: Int64) throws -> Bool {
        try db.run("INSERT OR IGNORE INTO containers (id, created_at) VALUES (?, ?)", [.text(id), .integer(time)])
        return db.changes > 0
    }

    static let userColumnNames = ["record_name", "email", "given_name", "family_name", "phone", "discoverable", "avatar_checksum", "avatar_type"]
    static let userColumns = userColumnNames.joined(separator: ", ")

    /// `userColumns` of the table aliased `alias`.
    static func userColumns(of alias: String) -> String {
        userColumnNames.map { alias + "." + $0 }.joined(separator: ", ")
    }

    func user(recordNameOrEmail key: String) throws -> UserAccount? {
        // A deleted account (A15) is nobody: its row stays only so its record name is never reused.
        try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE (record_name = ? OR email = ?) AND deleted_at IS NULL", [.text(key), .text(key)],
                        Self.userAccount)
    }

    func addUser(email: String, givenName: String?, familyName: String?, phoneNumber: String?, at time: Int64) throws -> UserAccount {
        let account = UserAccount(recordName: UserRecordNames.make(), email: email, givenName: givenName, familyName: familyName,
                                  phoneNumber: phoneNumber.map(PhoneNumbers.normalize))
        try db.run("""
            INSERT INTO users (record_name, email, given_name, family_name, phone, created_at) VALUES (?, ?, ?, ?, ?, ?)
            """, [.text(account.recordName), .text(email), givenName.map(SQLiteValue.text) ?? .null,
                  familyName.map(SQLiteValue.text) ?? .null, account.phoneNumber.map(SQLiteValue.text) ?? .null, .integer(time)])
        try linkInvitations(user: account)
        return account
    }

    func addToken(hash: [UInt8], grant: TokenGrant, at time: Int64) throws {
        let session = grant.session
        try db.run("""
            INSERT INTO tokens (hash, kind, user_record_name, container_id, created_at, device, expires_at, idle_ms, origins, callback)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
                   [.blob(hash), .text(grant.kind.rawValue), grant.user.map { .text($0.recordName) } ?? .null,
                    grant.container.map(SQLiteValue.text) ?? .null, .integer(time), session.device.map(SQLiteValue.text) ?? .null,
                    session.expiresAt.map(SQLiteValue.integer) ?? .null, session.idleMilliseconds.map(SQLiteValue.integer) ?? .null,
                    grant.origins.isEmpty ? .null : .text(grant.origins.joined(separator: "\n")),
                    grant.callback.map(SQLiteValue.text) ?? .null])
    }

    func grant(forTokenHash hash: [UInt8]) throws -> TokenGrant? {
        try db.queryOne("""
            SELECT t.kind, t.container_id, t.device, t.last_used_at, t.expires_at, t.idle_ms, t.revoked_at, t.origins, t.callback,
                   t.created_at, t.rotated_at, \(Self.userColumns(of: "u"))
            FROM tokens t LEFT JOIN users u ON u.record_name = t.user_record_name WHERE t.hash = ?
            """, [.blob(hash)]) { row in
            let kind = TokenGrant.Kind(rawValue: row.text(0)) ?? .user
            let container = row.isNull(1) ? nil : row.text(1)
            let user = row.isNull(11) ? nil : Self.userAccount(row, from: 11)
            let session = TokenSession(device: Self.optionalText(row, 2), lastUsedAt: row.isNull(3) ? row.int64(9) : row.int64(3),
                                       expiresAt: row.isNull(4) ? nil : row.int64(4), idleMilliseconds: row.isNull(5) ? nil : row.int64(5),
                                       revokedAt: row.isNull(6) ? nil : row.int64(6), createdAt: row.int64(9),
                                       rotatedAt: row.isNull(10) ? nil : row.int64(10))
            let origins = Self.optionalText(row, 7).map { $0.split(separator: "\n").map(String.init) } ?? []
            return TokenGrant(kind: kind, user: user, container: container, session: session, origins: origins,
                              callback: Self.optionalText(row, 8))
        }
    }

    /// Decodes `userColumns` starting at column `from`.
    static func userAccount(_ row: SQLiteStatement, from index: Int32) -> UserAccount {
        UserAccount(recordName: row.text(index), email: optionalText(row, index + 1), givenName: optionalText(row, index + 2),
                    familyName: optionalText(row, index + 3), phoneNumber: optionalText(row, index + 4),
                    discoverable: row.int64(index + 5) != 0,
                    avatar: row.isNull(index + 6) ? nil : Avatar(checksum: row.text(index + 6), contentType: optionalText(row, index + 7) ?? ""))
    }

    static func userAccount(_ row: SQLiteStatement) -> UserAccount { userAccount(row, from: 0) }

    static func optionalText(_ row: SQLiteStatement, _ index: Int32) -> String? {
        row.isNull(index) ? nil : row.text(index)
    }
}
