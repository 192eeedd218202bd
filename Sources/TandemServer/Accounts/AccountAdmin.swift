import Foundation
import TandemCore
public import TandemStore

/// Account administration used by the `tandem` CLI (`tandem user list|show|verify`,
/// `tandem token list|revoke`, API tokens with origins); safe while a server runs on the same
/// data directory. A revocation applies in a running server within its 30-second token cache.
public enum AccountAdmin {
    /// Creates an API token (`ckAPIToken`) for a container, with the origins its sign-in page may
    /// hand web auth tokens to and how (`callback`: nil or `message` to post to the opener, or a
    /// URL on one of those origins to redirect to with `ckWebAuthToken=` appended).
    /// - Throws: `NOT_FOUND` for an unknown container, `BAD_REQUEST` as `checkSignInTargets`;
    ///   nothing is written then.
    public static func createAPIToken(container: String, origins: [String], callback: String?, store: any Store) throws -> String {
        let (normalized, mode) = try checkSignInTargets(origins: origins, callback: callback)
        guard try store.read({ try $0.containerExists(container) }) else {
            throw CloudKitError(.notFound, "no container '\(container)'")
        }
        let token = Tokens.make(kind: .api)
        let now = Clock.milliseconds()
        let grant = TokenGrant(kind: .api, user: nil, container: container, origins: normalized, callback: mode)
        try store.write { try $0.addToken(hash: Tokens.hash(token), grant: grant, at: now) }
        return token
    }

    /// An API token's allowed origins in canonical form and its callback mode (nil: post a
    /// message), checked (decisions A8, A42). Each origin must be `http(s)://host[:port]` with no
    /// path, query, fragment, credentials or wildcard (`Origins.normalize`); the callback is
    /// `message` or an http(s) URL on one of them, without credentials, a fragment (the appended
    /// `ckWebAuthToken` would land in it), spaces or control characters.
    /// - Throws: `BAD_REQUEST` saying what is wrong.
    public static func checkSignInTargets(origins: [String], callback: String?) throws -> (origins: [String], callback: String?) {
        let normalized = try origins.map { origin in
            guard let value = Origins.normalize(origin) else {
                throw CloudKitError.badRequest(Origins.problem(origin) ?? "'\(origin)' is not an origin")
            }
            return value
        }
        guard let callback, callback != "message" else { return (normalized, nil) }
        guard !callback.contains("#"), callback.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            throw CloudKitError.badRequest("the sign-in callback '\(callback)' must be a URL without a fragment (#), spaces or control characters")
        }
        guard let origin = Origins.origin(ofURL: callback), normalized.contains(origin) else {
            throw CloudKitError.badRequest("the sign-in callback '\(callback)' must be 'message' or an http(s) URL on one of the --origin values")
        }
        return (normalized, callback)
    }

    /// The container's API tokens (IDs, origins, callback), revoked ones included, oldest first.
    /// - Throws: `NOT_FOUND` for an unknown container.
    public static func apiTokens(container: String, store: any Store) throws -> [StoredAPIToken] {
        try store.read { reader in
            guard try reader.containerExists(container) else { throw CloudKitError(.notFound, "no container '\(container)'") }
            return try reader.apiTokens(container: container)
        }
    }

    /// Revokes the container's API token `id` (16 hex digits from `apiTokens`): its sign-in page,
    /// CORS answers and sign-ins refuse it from then on (a running server within its 30-second
    /// token cache when revoked from another process).
    /// - Throws: `BAD_REQUEST` for an ID that is not 16 hex digits, `NOT_FOUND` for an unknown or
    ///   already revoked one.
    public static func revokeAPIToken(container: String, id: String, store: any Store) throws {
        guard id.count == 16, id.allSatisfy(\.isHexDigit) else {
            throw CloudKitError.badRequest("an API token ID is 16 hex digits (tandem token list --api --container ID)")
        }
        let now = Clock.milliseconds()
        guard try store.write({ try $0.revokeAPIToken(container: container, id: id, at: now) }) else {
            throw CloudKitError(.notFound, "no API token '\(id)' of container '\(container)' that is not revoked already")
        }
    }

    /// Accounts, oldest first: one line each (record name, email, verified, name).
    public static func list(store: any Store, limit: Int = 10_000) throws -> [AccountProfile] {
        try store.read { try $0.profiles(limit: limit) }
    }

    /// One account with its sign-in methods (kinds) and sessions.
    public static func show(_ key: String, store: any Store) throws -> (profile: AccountProfile, methods: [String], sessions: [StoredSession]) {
        try store.read { reader in
            guard let user = try reader.user(recordNameOrEmail: key), let profile = try reader.profile(user: user.recordName) else {
                throw CloudKitError(.notFound, "no user '\(key)'")
            }
            return (profile, try reader.signInMethods(user: user.recordName).map(\.kind), try reader.sessions(user: user.recordName))
        }
    }

    /// Marks an email verified. When someone signed up with it and has not followed the link,
    /// completes that sign-up (the account is created with its password): the operator vouches
    /// for the address, which is how accounts are made on a server without SMTP.
    /// - Throws: `NOT_FOUND` when there is neither an account nor a pending sign-up for `email`.
    public static func verify(_ email: String, store: any Store) throws -> AccountProfile {
        let now = Clock.milliseconds()
        let key = email.trimmingCharacters(in: .whitespaces).lowercased()
        return try store.write { tx in
            if let link = try tx.newestAccountLink(email: key, purpose: .signup, at: now), try tx.useAccountLink(hash: link.hash, at: now) {
                return try AccountService.completeSignUp(link, tx, at: now)
            }
            guard let user = try tx.user(recordNameOrEmail: key), let profile = try tx.profile(user: user.recordName) else {
                throw CloudKitError(.notFound, "no user or pending sign-up for '\(email)'")
            }
            try tx.setEmailVerified(user: user.recordName, true)
            var verified = profile
            verified.emailVerified = true
            return verified
        }
    }

    /// The user's sessions (user tokens not revoked), newest first.
    public static func sessions(of key: String, store: any Store) throws -> [StoredSession] {
        try show(key, store: store).sessions
    }

    /// Revokes one session of the user (`id` from `sessions`), or all when `id` is nil; returns how many.
    public static func revoke(_ key: String, session id: String?, store: any Store) throws -> Int {
        let now = Clock.milliseconds()
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else { throw CloudKitError(.notFound, "no user '\(key)'") }
        let count = try store.write { try $0.revokeSessions(user: user.recordName, id: id, at: now) }
        if let id, count == 0 { throw CloudKitError(.notFound, "no session '\(id)' of '\(key)'") }
        return count
    }

    /// Every admin token, oldest first, revoked and expired ones included (decisions A14).
    public static func adminTokens(store: any Store) throws -> [StoredAdminToken] {
        try store.read { try $0.adminTokens() }
    }

    /// Revokes admin token `id` (16 hex digits from `adminTokens`); a running server refuses it
    /// at its next request (admin tokens are not cached).
    /// - Throws: `BAD_REQUEST` for an ID that is not 16 hex digits, `NOT_FOUND` for an unknown
    ///   or already revoked one.
    public static func revokeAdminToken(_ id: String, store: any Store) throws {
        guard id.count == 16, id.allSatisfy(\.isHexDigit) else {
            throw CloudKitError.badRequest("an admin token ID is 16 hex digits (tandem token list --admin)")
        }
        let now = Clock.milliseconds()
        guard try store.write({ try $0.revokeAdminToken(id: id, at: now) }) else {
            throw CloudKitError(.notFound, "no admin token '\(id)' that is not revoked already")
        }
    }

    /// Deletes an account with everything it owns (decisions A15; `tandem user remove`). A running
    /// server refuses the account's tokens within its 30-second cache; its change feeds show the
    /// deletion at once, but its live subscribers are told only of changes made through it.
    /// - Throws: `NOT_FOUND` for an unknown or already deleted account.
    public static func remove(_ key: String, store: any Store) throws -> AccountDeletion.Report {
        guard let user = try store.read({ try $0.user(recordNameOrEmail: key) }) else { throw CloudKitError(.notFound, "no user '\(key)'") }
        return try AccountDeletion(store: store, hub: nil).delete(user: user.recordName)
    }
}
