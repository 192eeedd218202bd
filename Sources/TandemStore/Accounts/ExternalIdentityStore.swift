import TandemCore

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
