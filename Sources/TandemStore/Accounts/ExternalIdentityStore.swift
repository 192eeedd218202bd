import TandemCore
import TandemSQLite

/// Reads of sign-in methods by their subject: the account an OpenID Connect identity
/// (`kind` `oidc`, subject `issuer|sub`) is linked to (decisions A20).
public protocol ExternalIdentityReading {
    /// The account holding the sign-in method `kind` with `subject`, or nil.
    func user(signInKind kind: String, subject: String) throws -> UserAccount?
}

/// Writes for accounts made by an identity provider's sign-in.
public protocol ExternalIdentityWriting: ExternalIdentityReading {
    /// Adds an account for a person an identity provider vouched for: with `email` marked
    /// verified (the provider said `email_verified`), or without an email. Share invitations
    /// addressed to the email are linked to it.
    func addProviderUser(email: String?, displayName: String?, at time: Int64) throws -> UserAccount
}

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
