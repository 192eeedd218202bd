internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Accounts an identity provider vouches for (decisions A20; SQLite: `SQLiteStore+ExternalIdentities.swift`).
extension PostgresStoreTransaction {
    func user(signInKind kind: String, subject: String) throws -> UserAccount? {
        try db.queryOne("""
            SELECT \(Self.userColumns(of: "u"))
            FROM sign_in_methods m JOIN users u ON u.record_name = m.user_record_name WHERE m.kind = $1 AND m.subject = $2
            """, [.text(kind), .text(subject)]) { try Self.userAccount($0) }
    }

    func addProviderUser(email: String?, displayName: String?, at time: Int64) throws -> UserAccount {
        if let email { return try addVerifiedUser(email: email, displayName: displayName, at: time) }
        let account = UserAccount(recordName: UserRecordNames.make(), email: nil, givenName: displayName, familyName: nil, phoneNumber: nil)
        try db.run("INSERT INTO users (record_name, given_name, display_name, created_at) VALUES ($1, $2, $2, $3)",
                   [.text(account.recordName), .optional(displayName), .integer(time)])
        return account
    }
}
