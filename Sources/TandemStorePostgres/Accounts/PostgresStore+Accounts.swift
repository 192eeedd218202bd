internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Containers, accounts and tokens (SQLite: `SQLiteStore+Accounts.swift`).
extension PostgresStoreTransaction {
    func containerExists(_ id: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM containers WHERE id = $1", [.text(id)]) { _ in true } ?? false
    }

    func createContainer(_ id: String, at time: Int64) throws -> Bool {
        try db.run("INSERT INTO containers (id, created_at) VALUES ($1, $2) ON CONFLICT DO NOTHING", [.text(id), .integer(time)]) > 0
    }

    static let userColumnNames = ["record_name", "email", "given_name", "family_name", "phone", "discoverable", "avatar_checksum", "avatar_type"]
    static let userColumns = userColumnNames.joined(separator: ", ")

    /// `userColumns` of the table aliased `alias`.
    static func userColumns(of alias: String) -> String {
        userColumnNames.map { alias + "." + $0 }.joined(separator: ", ")
    }

    func user(recordNameOrEmail key: String) throws -> UserAccount? {
        // A deleted account (A15) is nobody: its row stays only so its record name is never reused.
        try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE (record_name = $1 OR tandem_fold(email) = tandem_fold($1)) AND deleted_at IS NULL",
                        [.text(key)]) { try Self.userAccount($0) }
    }

    func addUser(email: String, givenName: String?, familyName: String?, phoneNumber: String?, at time: Int64) throws -> UserAccount {
        let account = UserAccount(recordName: UserRecordNames.make(), email: email, givenName: givenName, familyName: familyName,
                                  phoneNumber: phoneNumber.map(PhoneNumbers.normalize))
        try db.run("""
            INSERT INTO users (record_name, email, given_name, family_name, phone, created_at) VALUES ($1, $2, $3, $4, $5, $6)
            """, [.text(account.recordName), .text(email), .optional(givenName), .optional(familyName),
                  .optional(account.phoneNumber), .integer(time)])
        try linkInvitations(user: account)
        return account
    }

    /// Links share invitations addressed to the account's email or phone to it.
    func linkInvitations(user: UserAccount) throws {
        if let email = user.email {
            try db.run("UPDATE share_participants SET user_record_name = $1 WHERE user_record_name IS NULL AND tandem_fold(email) = tandem_fold($2)",
                       [.text(user.recordName), .text(email)])
        }
        if let phone = user.phoneNumber {
            try db.run("UPDATE share_participants SET user_record_name = $1 WHERE user_record_name IS NULL AND phone = $2",
                       [.text(user.recordName), .text(PhoneNumbers.normalize(phone))])
        }
    }

    func addToken(hash: [UInt8], grant: TokenGrant, at time: Int64) throws {
        let session = grant.session
        try db.run("""
            INSERT INTO tokens (hash, kind, user_record_name, container_id, created_at, device, expires_at, idle_ms, origins, callback)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            """,
                   [.bytes(hash), .text(grant.kind.rawValue), .optional(grant.user?.recordName), .optional(grant.container),
                    .integer(time), .optional(session.device), .optional(session.expiresAt), .optional(session.idleMilliseconds),
                    grant.origins.isEmpty ? .null : .text(grant.origins.joined(separator: "\n")), .optional(grant.callback)])
    }

    func grant(forTokenHash hash: [UInt8]) throws -> TokenGrant? {
        try db.queryOne("""
            SELECT t.kind, t.container_id, t.device, t.last_used_at, t.expires_at, t.idle_ms, t.revoked_at, t.origins, t.callback,
                   t.created_at, t.rotated_at, \(Self.userColumns(of: "u"))
            FROM tokens t LEFT JOIN users u ON u.record_name = t.user_record_name WHERE t.hash = $1
            """, [.bytes(hash)]) { row in
            let kind = TokenGrant.Kind(rawValue: try row.string(0)) ?? .user
            let user = row.isNull(11) ? nil : try Self.userAccount(row, from: 11)
            let createdAt = try row.int64(9)
            let session = TokenSession(device: try row.optionalString(2), lastUsedAt: try row.optionalInt64(3) ?? createdAt,
                                       expiresAt: try row.optionalInt64(4), idleMilliseconds: try row.optionalInt64(5),
                                       revokedAt: try row.optionalInt64(6), createdAt: createdAt, rotatedAt: try row.optionalInt64(10))
            let origins = try row.optionalString(7).map { $0.split(separator: "\n").map(String.init) } ?? []
            return TokenGrant(kind: kind, user: user, container: try row.optionalString(1), session: session, origins: origins,
                              callback: try row.optionalString(8))
        }
    }

    /// Decodes `userColumns` starting at column `index`.
    static func userAccount(_ row: PostgresRow, from index: Int = 0) throws -> UserAccount {
        UserAccount(recordName: try row.string(index), email: try row.optionalString(index + 1),
                    givenName: try row.optionalString(index + 2), familyName: try row.optionalString(index + 3),
                    phoneNumber: try row.optionalString(index + 4), discoverable: try row.int64(index + 5) != 0,
                    avatar: row.isNull(index + 6) ? nil
                        : Avatar(checksum: try row.string(index + 6), contentType: try row.optionalString(index + 7) ?? ""))
    }
}
