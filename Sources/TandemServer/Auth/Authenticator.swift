import Foundation
import Synchronization
import TandemCore
import TandemCrypto
public import TandemStore

/// Resolves credentials to a user (decisions D10): `Authorization: Bearer <token>`, or the
/// CloudKit-style query parameters `ckAPIToken` (a container's API token) and
/// `ckWebAuthToken` (a user token).
///
/// Tokens are looked up by SHA-256; a found grant is cached (by token) for 30 seconds, per thread, so the
/// hot path touches neither the database nor a shared lock. A token unknown to the cache is always looked up, so one created by
/// `tandem token create` while the server runs works at once. A revocation made through this
/// server empties every thread's cache (an atomic epoch, read once per lookup); one made by
/// another process applies within the 30 seconds.
///
/// Web auth tokens from sign-in (decisions A6) work only in their container and stop at their
/// idle or absolute limit; their last use is written at most once a minute per thread. A refused
/// session says why in a stable way: `tandemReason` `SESSION_EXPIRED` or `SESSION_REVOKED` beside
/// CloudKit's `AUTHENTICATION_FAILED` (A12). Past half its idle limit, a web auth token is
/// replaced by a new one that the response carries in `X-Apple-CloudKit-Web-Auth-Token` (A13).
public final class Authenticator: Sendable {
    private let store: any Store
    private let caches = PerThread { GrantCache() }
    /// Grants read from the store, shared by every thread, for `userFromMemory` on the service
    /// thread (which reads no store): filled when a thread's own cache misses, same expiry and
    /// epoch (decisions E22).
    private let remembered = Locked(GrantCache())
    /// Bumped by each revocation: cached grants from an older epoch are read again.
    private let epoch = Atomic<Int>(0)
    static let cacheMilliseconds: Int64 = 30_000

    /// Where revocations are told to every node (decisions N7); set once while the server is built.
    private let bus = Locked<EventBus?>(nil)

    public init(store: any Store) { self.store = store }

    /// Revocations go through `bus` from now on (to every node), and revocations from other nodes
    /// empty this node's caches.
    func connect(to bus: EventBus) {
        self.bus.withLock { $0 = bus }
        bus.subscribe { [weak self] delivery in
            switch delivery {
            case .event(let event):
                if case .grantsRevoked = event.body { self?.forgetCachedGrants() }
            case .missed:
                // A revocation may be among what was missed.
                self?.forgetCachedGrants()
            }
        }
    }

    /// The user a request acts as, in `container`.
    /// - Throws: `AUTHENTICATION_REQUIRED` (421) when no user credential is present,
    ///   `AUTHENTICATION_FAILED` (401) when a credential is unknown or belongs to another container.
    public func user(headers authorization: String?, parameters: [String: String], container: String,
                     signInURL: String) throws -> UserAccount {
        try signedIn(headers: authorization, parameters: parameters, container: container, signInURL: signInURL, rotating: false).user
    }

    /// The user a request acts as, in `container`, and with `rotating`, the token that replaces the
    /// presented one when it is due for rotation (decisions A13): the caller sends it back in
    /// `X-Apple-CloudKit-Web-Auth-Token`. The presented token keeps working for
    /// `TokenSession.rotationGraceMilliseconds`.
    /// - Throws: as `user(headers:parameters:container:signInURL:)`.
    public func signedIn(headers authorization: String?, parameters: [String: String], container: String,
                         signInURL: String, rotating: Bool) throws -> (user: UserAccount, rotatedToken: String?) {
        var userToken: String?
        if let authorization {
            guard let token = Self.bearerToken(authorization) else {
                throw CloudKitError(.authenticationFailed, "the Authorization header must be 'Bearer <token>'")
            }
            userToken = token
        }
        if let apiToken = parameters["ckAPIToken"] {
            guard try apiGrant(apiToken, container: container) != nil else {
                throw CloudKitError(.authenticationFailed, "ckAPIToken is not an API token of container '\(container)'")
            }
            if userToken == nil { userToken = parameters["ckWebAuthToken"] }
        }
        guard let userToken, !userToken.isEmpty else {
            var error = CloudKitError(.authenticationRequired, "this request needs a signed-in user: send 'Authorization: Bearer <token>' or ckAPIToken with ckWebAuthToken")
            // The sign-in page needs the app's API token to know where to hand the session back.
            let apiToken = parameters["ckAPIToken"].flatMap { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) }
            error.redirectURL = signInURL.isEmpty ? signInURL : signInURL + (apiToken.map { "?ckAPIToken=" + $0 } ?? "")
            throw error
        }
        return try signedIn(token: userToken, container: container, rotating: rotating)
    }

    /// The user a user token (Bearer or `ckWebAuthToken`) stands for in `container`.
    /// - Throws: `AUTHENTICATION_FAILED` when the token is unknown, an API token, issued for
    ///   another container, revoked, or expired (idle or absolute limit).
    public func user(token: String, container: String) throws -> UserAccount {
        try signedIn(token: token, container: container, rotating: false).user
    }

    /// The user a user token stands for in `container`, and with `rotating`, its replacement
    /// when one was issued now (decisions A13).
    /// - Throws: as `user(token:container:)`.
    public func signedIn(token: String, container: String, rotating: Bool) throws -> (user: UserAccount, rotatedToken: String?) {
        guard let (found, cached) = try grant(for: token), found.kind == .user, let user = found.user else {
            throw CloudKitError(.authenticationFailed, "the user token is not valid")
        }
        var grant = found
        if let bound = grant.container, bound != container {
            throw CloudKitError(.authenticationFailed, "this web auth token was issued for another container")
        }
        let now = Clock.milliseconds()
        if grant.session.refusal(at: now) != nil && cached {
            // Another thread may have recorded a later use: decide on the stored row.
            guard let fresh = try self.grant(for: token, bypassingCache: true) else {
                throw CloudKitError(.authenticationFailed, "the user token is not valid")
            }
            grant = fresh.grant
        }
        if let refusal = grant.session.refusal(at: now) {
            var error = CloudKitError(.authenticationFailed, refusal.reason)
            error.tandemReason = refusal.kind.rawValue
            throw error
        }
        if rotating && grant.session.wantsRotation(at: now), let successor = try rotate(token, grant: grant, at: now) {
            return (user, successor)
        }
        if let idle = grant.session.idleMilliseconds, let last = grant.session.lastUsedAt, now - last > min(60_000, idle / 4) {
            try touch(token, at: now)
        }
        return (user, nil)
    }

    /// Issues the token that replaces `token` (same user, container, device and absolute limit)
    /// and marks `token` rotated; nil when another request rotated it first (only one successor
    /// is ever issued). Every thread's cache is emptied, so the grace period ends on time.
    private func rotate(_ token: String, grant: TokenGrant, at now: Int64) throws -> String? {
        let successor = Tokens.make(kind: .user)
        var session = grant.session
        session.lastUsedAt = nil
        session.createdAt = nil
        session.rotatedAt = nil
        let replaced = TokenGrant(kind: .user, user: grant.user, container: grant.container, session: session)
        let rotated = try store.write { try $0.rotateToken(hash: Tokens.hash(token), to: Tokens.hash(successor), grant: replaced, at: now) }
        guard rotated else { return nil }
        revoked()
        return successor
    }

    /// The user a request's credentials stand for in `container`, decided from memory alone and
    /// without blocking (the HTTP service thread's admission, decisions E22): every grant it needs
    /// was read from the store by this process less than 30 s ago (`cacheMilliseconds`) and no
    /// revocation came since, as for the per-thread caches. `nil` when a grant is not in memory,
    /// or when `user(headers:parameters:container:signInURL:)` might refuse or need to write:
    /// the caller then asks that. Never throws, never writes (no last-use touch, no rotation).
    public func userFromMemory(headers authorization: String?, parameters: [String: String], container: String) -> UserAccount? {
        var userToken: String?
        if let authorization {
            guard let token = Self.bearerToken(authorization) else { return nil }
            userToken = token
        }
        let now = Clock.milliseconds()
        if let apiToken = parameters["ckAPIToken"] {
            guard let api = remembered(apiToken, at: now), api.kind == .api, api.container == container,
                  api.session.revokedAt == nil else { return nil }
            if userToken == nil { userToken = parameters["ckWebAuthToken"] }
        }
        guard let userToken, !userToken.isEmpty, let grant = remembered(userToken, at: now), grant.kind == .user,
              let user = grant.user, grant.container == nil || grant.container == container,
              grant.session.refusal(at: now) == nil else { return nil }
        return user
    }

    private func remembered(_ token: String, at now: Int64) -> TokenGrant? {
        let generation = epoch.load(ordering: .relaxed)
        return remembered.withLock { memory in
            guard let entry = memory.entries[token], entry.expires > now, entry.epoch == generation else { return nil }
            return entry.grant
        }
    }

    /// The grant of a container's API token (`ckAPIToken`), or nil when `token` is not one.
    public func apiGrant(_ token: String, container: String) throws -> TokenGrant? {
        guard let (grant, _) = try grant(for: token), grant.kind == .api, grant.container == container,
              grant.session.revokedAt == nil else { return nil }
        return grant
    }

    /// The user token a request presents (Bearer, else `ckWebAuthToken`), unchecked.
    public static func presentedUserToken(authorization: String?, parameters: [String: String]) -> String? {
        if let authorization, let token = bearerToken(authorization) { return token }
        return parameters["ckWebAuthToken"]
    }

    /// The token of an `Authorization: Bearer <token>` value (the scheme in any case, the token
    /// without surrounding spaces; possibly empty), or nil when the value is not of that form.
    /// The usual `Bearer X` (no space before it, one after, an ASCII character next) is read from
    /// its bytes; anything else by splitting at the first run of spaces, as before (decisions E17:
    /// the split cost 8,000 instructions a request).
    static func bearerToken(_ authorization: String) -> String? {
        let bytes = authorization.utf8
        let scheme = bytes.prefix(7)
        if scheme.count == 7, zip(scheme, "bearer".utf8).allSatisfy({ $0 | 0x20 == $1 }), scheme.last == UInt8(ascii: " "),
           let next = bytes.dropFirst(7).first, next != UInt8(ascii: " "), next < 0x80 {
            let start = bytes.index(bytes.startIndex, offsetBy: 7)
            return String(authorization[start...].withoutSurroundingSpaces)
        }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1].withoutSurroundingSpaces)
    }

    /// Forgets every cached grant (on every thread, and on every node through the bus: N7):
    /// called after a revocation through this server, so it applies to the next request, and
    /// after a change to the account a grant carries (its avatar, A48). (A `tandem token revoke`
    /// from another process applies within the 30-second cache.)
    public func revoked() {
        guard let bus = bus.withLock({ $0 }) else { return forgetCachedGrants() }
        bus.publish(.grantsRevoked)
    }

    private func forgetCachedGrants() {
        epoch.add(1, ordering: .relaxed)
    }

    private func touch(_ token: String, at now: Int64) throws {
        let hash = Tokens.hash(token)
        try store.write { try $0.touchToken(hash: hash, at: now) }
        let cache = caches.current
        cache.entries[token]?.grant.session.lastUsedAt = now
        remembered.withLock { $0.entries[token]?.grant.session.lastUsedAt = now }
    }

    /// The token's grant and whether it came from this thread's cache. The cache is keyed by the
    /// token itself, so a cached grant costs no SHA-256 (6,000 instructions, twice a request:
    /// admission and route; decisions E17); the hash is taken only to read the store.
    private func grant(for token: String, bypassingCache: Bool = false) throws -> (grant: TokenGrant, cached: Bool)? {
        let now = Clock.milliseconds()
        let cache = caches.current
        let generation = epoch.load(ordering: .relaxed)
        if !bypassingCache, let cached = cache.entries[token], cached.expires > now, cached.epoch == generation { return (cached.grant, true) }
        let hash = Tokens.hash(token)
        guard let grant = try store.read({ try $0.grant(forTokenHash: hash) }) else { return nil }
        if cache.entries.count > 10_000 { cache.entries.removeAll() }
        cache.entries[token] = (grant, now + Self.cacheMilliseconds, generation)
        remembered.withLock { memory in
            if memory.entries.count > 10_000 { memory.entries.removeAll() }
            memory.entries[token] = (grant, now + Self.cacheMilliseconds, generation)
        }
        return (grant, false)
    }
}

/// Creates tokens: 256 random bits, base64url, prefixed with their kind; only the SHA-256 is stored.
public enum Tokens {
    public static func make(kind: TokenGrant.Kind) -> String {
        random(prefix: kind == .api ? "tdk_" : "tdu_")
    }

    /// `prefix` followed by 256 random bits in base64url (asset upload URLs use `up_`).
    public static func random(prefix: String) -> String {
        let raw = Data(Digest.randomBytes(32)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        return prefix + raw
    }

    public static func hash(_ token: String) -> [UInt8] { Digest.sha256(Array(token.utf8)) }
}

/// One thread's cached grants (only its own thread touches it), or the shared memory of them
/// (under a lock).
final class GrantCache: @unchecked Sendable {
    /// By token (in this process's memory only, as the request that presented it is).
    var entries: [String: (grant: TokenGrant, expires: Int64, epoch: Int)] = [:]
}
