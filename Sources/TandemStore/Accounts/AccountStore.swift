/// A person's account as the sign-in pages and `tandem user` show it.
public struct AccountProfile: Sendable, Hashable {
    public var recordName: String
    public var email: String?
    /// The person proved they receive mail at `email` (a sign-up or reset link, or an operator's
    /// `tandem user verify`).
    public var emailVerified: Bool
    public var displayName: String?
    /// Milliseconds since 1970.
    public var createdAt: Int64

    public init(recordName: String, email: String?, emailVerified: Bool, displayName: String?, createdAt: Int64) {
        self.recordName = recordName
        self.email = email
        self.emailVerified = emailVerified
        self.displayName = displayName
        self.createdAt = createdAt
    }
}

/// One way a person signs in, as stored: `kind` names the method (`password`), `subject` tells
/// several of one kind apart (empty for a password), `secret` is what the method checks against
/// (for a password, its Argon2id encoded hash; never the password).
public struct StoredSignInMethod: Sendable, Hashable {
    public var kind: String
    public var subject: String
    public var secret: String
    public var createdAt: Int64
    public var lastUsedAt: Int64?

    public init(kind: String, subject: String, secret: String, createdAt: Int64, lastUsedAt: Int64? = nil) {
        self.kind = kind
        self.subject = subject
        self.secret = secret
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
    }
}

/// A single-use link sent by email, stored by the SHA-256 of its secret.
public struct AccountLink: Sendable, Hashable {
    public enum Purpose: String, Sendable {
        /// Creates the account (`email`, `displayName`, password hash in `pendingSecret`) when followed.
        case signup
        /// Lets the account `userRecordName` set a new password.
        case reset
    }

    public var hash: [UInt8]
    public var purpose: Purpose
    public var email: String
    public var userRecordName: String?
    public var displayName: String?
    public var pendingSecret: String?
    public var createdAt: Int64
    public var expiresAt: Int64
    public var usedAt: Int64?

    public init(hash: [UInt8], purpose: Purpose, email: String, userRecordName: String? = nil, displayName: String? = nil,
                pendingSecret: String? = nil, createdAt: Int64, expiresAt: Int64, usedAt: Int64? = nil) {
        self.hash = hash
        self.purpose = purpose
        self.email = email
        self.userRecordName = userRecordName
        self.displayName = displayName
        self.pendingSecret = pendingSecret
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// A user token as its owner sees it in a list of sessions.
public struct StoredSession: Sendable, Hashable {
    /// 16 hex digits: the first 8 bytes of the token's SHA-256 (names it without revealing it).
    public var id: String
    /// The container a web auth token works in; nil for CLI-made tokens.
    public var container: String?
    public var createdAt: Int64
    public var session: TokenSession

    public init(id: String, container: String?, createdAt: Int64, session: TokenSession) {
        self.id = id
        self.container = container
        self.createdAt = createdAt
        self.session = session
    }
}

/// Reads of accounts, sign-in methods, consents, emailed links and sessions.
public protocol AccountReading {
    func profile(user: String) throws -> AccountProfile?
    /// Every account, oldest first, at most `limit`.
    func profiles(limit: Int) throws -> [AccountProfile]
    func signInMethods(user: String) throws -> [StoredSignInMethod]
    /// The method of `kind` whose subject is `subject` (a passkey by its credential ID), with its
    /// user's record name; nil when there is none.
    func signInMethod(kind: String, subject: String) throws -> (user: String, method: StoredSignInMethod)?
    /// Whether the user agreed to let the container's app use their account.
    func hasConsent(user: String, container: String) throws -> Bool
    func accountLink(hash: [UInt8]) throws -> AccountLink?
    /// The newest unused, unexpired link of `purpose` for `email`.
    func newestAccountLink(email: String, purpose: AccountLink.Purpose, at time: Int64) throws -> AccountLink?
    /// The user's user tokens that are not revoked, newest first.
    func sessions(user: String) throws -> [StoredSession]
    /// When the session of the token with `hash` began: the creation time of the first token of
    /// its rotation chain (a rotated token's successor is a new token, not a new sign-in; A13,
    /// A15). Nil for an unknown token.
    func signedInAt(tokenHash hash: [UInt8]) throws -> Int64?
    /// Whether share invitations are emailed to the user (true unless they turned it off, and
    /// for a user record name with no account; decisions A31).
    func invitationEmails(user: String) throws -> Bool
}

/// Writes of accounts, sign-in methods, consents, emailed links and sessions.
public protocol AccountWriting: AccountReading {
    /// Adds an account whose email is verified (it followed a sign-up link) and links share
    /// invitations addressed to that email.
    func addVerifiedUser(email: String, displayName: String?, at time: Int64) throws -> UserAccount
    func setEmailVerified(user: String, _ verified: Bool) throws
    /// Turns share invitation emails to the user on or off (A31).
    func setInvitationEmails(user: String, _ on: Bool) throws
    /// Sets the name the user shows others (`users.given_name`, `family_name`; nil clears one)
    /// and their display name, the two joined by a space (decisions R31).
    func setNames(user: String, givenName: String?, familyName: String?) throws
    /// Adds the method, or replaces the secret of the user's method of the same kind and subject.
    func putSignInMethod(user: String, _ method: StoredSignInMethod) throws
    func touchSignInMethod(user: String, kind: String, subject: String, at time: Int64) throws
    func addConsent(user: String, container: String, at time: Int64) throws
    func addAccountLink(_ link: AccountLink) throws
    /// Marks a link used; false when it is unknown, used or expired at `time` (so it works once).
    /// Every other unused link of the same purpose for the same email is voided with it: once a
    /// sign-up created the account or a reset set the password, an older or rival link (another
    /// sign-up someone started with that address) must not act on the account.
    func useAccountLink(hash: [UInt8], at time: Int64) throws -> Bool
    /// Records a use of a user token (at most a few times a minute per token).
    func touchToken(hash: [UInt8], at time: Int64) throws
    /// Revokes one token (and the tokens that replaced it); false when it was unknown or already revoked.
    func revokeToken(hash: [UInt8], at time: Int64) throws -> Bool
    /// Revokes the user's session `id` (and any earlier token it replaced that is still in its
    /// grace period), or all of them when `id` is nil; returns how many sessions.
    func revokeSessions(user: String, id: String?, at time: Int64) throws -> Int
    /// Marks the token `hash` replaced at `time` and adds `successor` with `grant` (decisions
    /// A13); false, adding nothing, when the token was already replaced or revoked.
    func rotateToken(hash: [UInt8], to successor: [UInt8], grant: TokenGrant, at time: Int64) throws -> Bool
}
