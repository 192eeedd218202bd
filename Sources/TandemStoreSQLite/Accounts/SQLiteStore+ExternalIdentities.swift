import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func user(signInKind kind: String, subject: String) throws -> UserAccount? {
        try db.queryOne("""
            SELECT \(Self.userColumns(of: "u"))
            FROM sign_in_methods m JOIN users u ON u.record_name = m.user_record_name WHERE m.kind = ? AND m.subject = ?
            """, [.text(kind), .text(subject)]) { Self.userAccount($0, from: 0) }
    }

    func addProviderUser(email: String?, displayName: String?, at time: Int64) throws -> UserAccount {
        if let email { return try addVerifiedUser(email: email, displayName: displayName, at: time) }
        let account = UserAccount(recordName: UserRecordNames.make(), email: nil, givenName: displayName, familyName: nil, phoneNumber: nil)
        try db.run("INSERT INTO users (record_name, given_name, display_name, created_at) VALUES (?, ?, ?, ?)",
                   [.text(account.recordName), displayName.map(SQLiteValue.text) ?? .null, displayName.map(SQLiteValue.text) ?? .null,
                    .integer(time)])
        return account
    }
}
