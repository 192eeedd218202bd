import Foundation
import Synchronization
import TandemCore
import TandemCrypto
import TandemStore

/// Accounts: sign-up (an emailed link creates the account), sign-in through a `SignInMethod`
/// with rate limits and per-container consent, and sessions (web auth tokens) that expire and
/// are listed and revoked (issue 16; decisions A1–A7).
final class AccountService: Sendable {
    let store: any Store
    let authenticator: Authenticator
    let settings: AccountSettings
    let hasher: Argon2id
    let password: PasswordSignIn
    /// Passkeys (WebAuthn, ES256) and their outstanding challenges.
    let passkey: PasskeySignIn
    let limiter: SignInLimiter
    let log: RequestLog
    /// Sends sign-up and reset links; nil when no SMTP server is configured.
    let mailer: (any AccountMailer)?
    private let warnedNoMail = Atomic<Bool>(false)
    private let warnedUntrustedHost = Atomic<Bool>(false)

    init(store: any Store, authenticator: Authenticator, settings: AccountSettings, log: RequestLog,
         mailer: (any AccountMailer)? = nil) {
        self.store = store
        self.authenticator = authenticator
        self.settings = settings
        self.log = log
        self.mailer = mailer
        hasher = Argon2id(parameters: Argon2id.Parameters(settings.passwordHash) ?? Argon2id.Parameters())
        password = PasswordSignIn(store: store, hasher: hasher)
        passkey = PasskeySignIn(store: store, challenges: PasskeyChallenges(), rpID: settings.passkeyRPID,
                                requireUserVerification: settings.passkeyUserVerification)
        limiter = SignInLimiter(limits: SignInLimiter.Limits(
            perAccount: settings.attemptsPerAccount, perAddress: settings.attemptsPerAddress,
            signUpsPerAddress: settings.signUpsPerAddress, windowMilliseconds: settings.attemptWindowSeconds * 1000))
    }

    // MARK: Sign-up

    /// Starts a sign-up: the answer is the same whether or not the email has an account (no
    /// enumeration, A4). For a new email a sign-up link holding the account to create (name and
    /// password hash) is stored and mailed; nothing else exists until the link is followed.
    /// - Throws: `BAD_REQUEST` for a malformed email, a password outside 8–1024, a name over 200
    ///   characters; `THROTTLED` after too many sign-ups from `address`.
    func signUp(email rawEmail: String, password rawPassword: String?, displayName: String?, address: String,
                linkBase: String?) throws {
        let email = try EmailAddress.normalize(rawEmail)
        let secretPassword = try PasswordSignIn.password(rawPassword, forNewAccount: true)
        let name = displayName?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        guard (name?.count ?? 0) <= 200 else { throw CloudKitError.badRequest("'name' is at most 200 characters") }
        let now = Clock.milliseconds()
        try limiter.signUp(address: address, at: now)
        // Hashed in both cases, so a known email answers in the same time as an unknown one.
        let hash = try hasher.hash(secretPassword)
        let existing = try store.read { try $0.user(recordNameOrEmail: email) }.flatMap { $0.email?.lowercased() == email ? $0 : nil }
        let secret = Tokens.random(prefix: "")
        if existing == nil {
            let link = AccountLink(hash: Tokens.hash(secret), purpose: .signup, email: email, displayName: name, pendingSecret: hash,
                                   createdAt: now, expiresAt: now + settings.linkLifetimeSeconds * 1000)
            try store.write { try $0.addAccountLink(link) }
        }
        if existing == nil {
            sendLink(linkBase, secret) { settings.mailTemplates.apply(.signUp, to: AccountMail.signUp(to: email, link: $0), ["link": $0]) }
        } else {
            send(settings.mailTemplates.apply(.alreadyRegistered, to: AccountMail.alreadyRegistered(to: email), [:]))
        }
    }

    /// Hands `mail` to the mailer; without one, says once that nothing is sent.
    func send(_ mail: AccountMail) {
        guard let mailer else {
            if !warnedNoMail.exchange(true, ordering: .relaxed) {
                log.message("accounts: no SMTP server configured (tandem serve --smtp-url), so no sign-up, reset or share invitation email is sent; an operator can run: tandem user verify EMAIL")
            }
            return
        }
        mailer.send(mail)
    }

    /// Sends the mail `compose` makes around the link `{base}…&token={secret}`. Without a trusted
    /// `base` (`RequestContext.mailLinkBaseURL`, A38) nothing is sent, and the server says once why.
    func sendLink(_ base: String?, _ secret: String, _ compose: (_ link: String) -> AccountMail) {
        guard let base else {
            if mailer != nil { untrustedHost() }
            return
        }
        send(compose(Self.link(base, secret)))
    }

    /// Says once that an email was not sent because the request's Host cannot be trusted (A38).
    func untrustedHost() {
        guard mailer != nil, !warnedUntrustedHost.exchange(true, ordering: .relaxed) else { return }
        log.message("accounts: no sign-up, reset or share invitation email is sent for a request whose Host is not this machine (localhost) while --public-url is not set, so a forged Host cannot mail people links to another server; set tandem serve --public-url https://YOUR-SERVER")
    }

    static func link(_ base: String, _ secret: String) -> String {
        base + (base.contains("?") ? "&" : "?") + "token=" + secret
    }

    // MARK: Password reset

    /// Starts a password reset: the same answer for every email (A4). For an account, a reset
    /// link is stored and mailed.
    /// - Throws: `BAD_REQUEST` for a malformed email, `THROTTLED` after too many requests from `address`.
    func requestReset(email rawEmail: String, address: String, linkBase: String?) throws {
        let email = try EmailAddress.normalize(rawEmail)
        let now = Clock.milliseconds()
        try limiter.signUp(address: address, at: now)
        guard let user = try store.read({ try $0.user(recordNameOrEmail: email) }), user.email?.lowercased() == email else { return }
        let secret = Tokens.random(prefix: "")
        let link = AccountLink(hash: Tokens.hash(secret), purpose: .reset, email: email, userRecordName: user.recordName,
                               createdAt: now, expiresAt: now + settings.linkLifetimeSeconds * 1000)
        try store.write { try $0.addAccountLink(link) }
        sendLink(linkBase, secret) { settings.mailTemplates.apply(.reset, to: AccountMail.reset(to: email, link: $0), ["link": $0]) }
    }

    /// Follows a reset link: sets the new password, marks the email verified (the link proves it)
    /// and revokes every session of the account (whoever knew the old password is signed out).
    /// The link is judged first, so an expired or used one says so whatever the password.
    /// - Throws: `AUTHENTICATION_FAILED` when the link is unknown, used or expired
    ///   (`AccountLinkRefusal`, A46); `BAD_REQUEST` for an unacceptable password (the link stays
    ///   usable).
    func followResetLink(_ secret: String, password newPassword: String?) throws -> AccountProfile {
        let hash = Tokens.hash(secret)
        try checkLink(secret, .reset)
        let password = try PasswordSignIn.password(newPassword, forNewAccount: true)
        let encoded = try hasher.hash(password)
        let now = Clock.milliseconds()
        let profile = try store.write { tx in
            let link = try tx.accountLink(hash: hash)
            if let refusal = AccountLinkRefusal.of(link, purpose: .reset, now: now) { throw refusal.error(.reset) }
            guard let user = link?.userRecordName, try tx.useAccountLink(hash: hash, at: now), let profile = try tx.profile(user: user) else {
                throw AccountLinkRefusal.used.error(.reset)
            }
            try tx.putSignInMethod(user: user, StoredSignInMethod(kind: PasswordSignIn.kind, subject: "", secret: encoded, createdAt: now))
            try tx.setEmailVerified(user: user, true)
            _ = try tx.revokeSessions(user: user, id: nil, at: now)
            var verified = profile
            verified.emailVerified = true
            return verified
        }
        authenticator.revoked()
        return profile
    }

    /// Follows a sign-up link's secret: creates the account (or, for one an operator added, sets
    /// its password) with the email verified.
    /// - Throws: `AUTHENTICATION_FAILED` when the link is unknown, used or expired
    ///   (`AccountLinkRefusal`, A46).
    func followSignUpLink(_ secret: String) throws -> AccountProfile {
        let hash = Tokens.hash(secret)
        let now = Clock.milliseconds()
        return try store.write { tx in
            let link = try tx.accountLink(hash: hash)
            if let refusal = AccountLinkRefusal.of(link, purpose: .signup, now: now) { throw refusal.error(.signup) }
            guard let link, try tx.useAccountLink(hash: hash, at: now) else { throw AccountLinkRefusal.used.error(.signup) }
            return try Self.completeSignUp(link, tx, at: now)
        }
    }

    /// Whether the link with `secret` may be followed for `purpose` now, read only (the page an
    /// emailed link opens says at once when it cannot; A46).
    /// - Throws: `AccountLinkRefusal.error` when it may not.
    func checkLink(_ secret: String, _ purpose: AccountLink.Purpose) throws {
        let link = try store.read { try $0.accountLink(hash: Tokens.hash(secret)) }
        if let refusal = AccountLinkRefusal.of(link, purpose: purpose, now: Clock.milliseconds()) { throw refusal.error(purpose) }
    }

    /// Creates the account a sign-up link describes, or gives an existing account with that email
    /// the link's password and marks it verified (the link proves the address).
    static func completeSignUp(_ link: AccountLink, _ tx: any StoreWriting, at now: Int64) throws -> AccountProfile {
        let user: UserAccount
        if let existing = try tx.user(recordNameOrEmail: link.email), existing.email?.lowercased() == link.email.lowercased() {
            // A sign-up link never replaces a password: an account that has one is changed
            // only by its owner's sign-in or a reset link (QA: a rival sign-up's link took it over).
            let methods = try tx.signInMethods(user: existing.recordName)
            if link.pendingSecret != nil, methods.contains(where: { $0.kind == PasswordSignIn.kind }) {
                throw CloudKitError(.authenticationFailed, "this email already has an account with a password; sign in, or reset the password")
            }
            // Nor does a passkey join an account that has a way to sign in (A28).
            if let pending = link.pendingSecret, pending.hasPrefix(StoredPasskey.pendingPrefix), !methods.isEmpty {
                throw CloudKitError(.authenticationFailed, "this email already has an account; sign in with it")
            }
            user = existing
            try tx.setEmailVerified(user: user.recordName, true)
        } else {
            user = try tx.addVerifiedUser(email: link.email, displayName: link.displayName, at: now)
        }
        if let secret = link.pendingSecret, let passkey = StoredPasskey.method(pending: secret, at: now) {
            guard try tx.signInMethod(kind: passkey.kind, subject: passkey.subject) == nil else {
                throw CloudKitError(.authenticationFailed, "this passkey is registered to another account already; sign up again")
            }
            try tx.putSignInMethod(user: user.recordName, passkey)
        } else if let secret = link.pendingSecret {
            try tx.putSignInMethod(user: user.recordName, StoredSignInMethod(kind: PasswordSignIn.kind, subject: "", secret: secret, createdAt: now))
        }
        guard let profile = try tx.profile(user: user.recordName) else { throw CloudKitError(.internalError, "the new account vanished") }
        return profile
    }

    // MARK: Sign-in

    /// A signed-in session: the web auth token (shown once) and what it is.
    struct Session: Sendable {
        var token: String
        var user: UserAccount
        var id: String
        var expiresAt: Int64
    }

    /// The first sign-in to a container needs the person's consent (A2).
    struct ConsentRequired: Error {
        var user: UserAccount
    }

    /// Checks a credential with `method` and, when it proves an account that consented to
    /// `container` (or consents now), issues a web auth token for that container.
    /// - Throws: `BAD_REQUEST` for a malformed credential, `THROTTLED` (with `retryAfter`) when the
    ///   account or address is out of attempts, `AUTHENTICATION_FAILED` for a wrong credential
    ///   (the same answer for an unknown account), `ConsentRequired` on a first sign-in without
    ///   `consent`.
    func signIn(with method: any SignInMethod, credential: [String: String], container: String, consent: Bool,
                device: String?, address: String) throws -> Session {
        let user = try authenticate(with: method, credential: credential, address: address)
        let now = Clock.milliseconds()
        if try !store.read({ try $0.hasConsent(user: user.recordName, container: container) }) {
            guard consent else { throw ConsentRequired(user: user) }
            try store.write { try $0.addConsent(user: user.recordName, container: container, at: now) }
        }
        return try issueSession(user: user, container: container, device: device, at: now)
    }

    /// The account a credential proves, under the sign-in rate limits (A5): checked and counted
    /// as a failure before the credential is (N64), a success clearing the account's count. Used by `signIn`
    /// and by the web console's sign-in (decisions C9), which issues its own kind of session.
    /// - Throws: `BAD_REQUEST` for a malformed credential, `THROTTLED` (with `retryAfter`),
    ///   `AUTHENTICATION_FAILED` for a wrong credential or an unknown account (one answer).
    func authenticate(with method: any SignInMethod, credential: [String: String], address: String) throws -> UserAccount {
        let key = try method.accountKey(credential)
        // Counted as a failure from the start (N64); taken back below when it is not one.
        let admitted = Clock.milliseconds()
        try limiter.admitSignIn(account: key, address: address, at: admitted)
        let proved: UserAccount?
        do {
            proved = try method.authenticate(credential)
        } catch let refused as CloudKitError where refused.code == .authenticationFailed {
            // A method that can say why (an ID token's rule) counts as a failure too.
            throw refused
        } catch {
            limiter.uncounted(account: key, address: address, at: admitted)
            throw error
        }
        guard let user = proved else { throw CloudKitError(.authenticationFailed, "the email or password is wrong") }
        limiter.succeeded(account: key, address: address, at: admitted)
        return user
    }

    func issueSession(user: UserAccount, container: String, device: String?, at now: Int64) throws -> Session {
        let token = Tokens.make(kind: .user)
        let expiresAt = now + settings.sessionLifetimeSeconds * 1000
        let session = TokenSession(device: device.map { String($0.prefix(200)) }, expiresAt: expiresAt,
                                   idleMilliseconds: settings.sessionIdleSeconds * 1000)
        let hash = Tokens.hash(token)
        try store.write { try $0.addToken(hash: hash, grant: TokenGrant(kind: .user, user: user, container: container, session: session), at: now) }
        return Session(token: token, user: user, id: Sessions.id(hash), expiresAt: expiresAt)
    }

    // MARK: Sessions

    /// Revokes the presented token (signing out).
    func signOut(token: String) throws {
        let now = Clock.milliseconds()
        _ = try store.write { try $0.revokeToken(hash: Tokens.hash(token), at: now) }
        authenticator.revoked()
    }

    /// Revokes one of the user's sessions, or all; returns how many.
    func revoke(user: String, session id: String?) throws -> Int {
        let now = Clock.milliseconds()
        let count = try store.write { try $0.revokeSessions(user: user, id: id, at: now) }
        authenticator.revoked()
        return count
    }
}

/// Names of sessions.
enum Sessions {
    /// 16 hex digits: the first 8 bytes of the token's SHA-256.
    static func id(_ hash: [UInt8]) -> String { Digest.hex(Array(hash.prefix(8))) }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
