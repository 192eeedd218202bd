import TandemCrypto
import Foundation
import Synchronization
import TandemCore
public import TandemStore

/// Resolves credentials to a user (decisions D10): `Authorization: Bearer <token>`, or the
/// CloudKit-style query parameters `ckAPIToken` (a container's API token) and
/// `ckWebAuthToken` (a user token).
///
/// Tokens are looked up by SHA-256; a found grant is cached for 30 seconds, per thread, so the
/// hot path touches neither the database nor a shared lock. A token unknown to the cache is always looked up, so one created by
/// `tandem token create` while the server runs works at once.
public final class Authenticator: Sendable {
    private let store: any Store
    private let caches = PerThread { GrantCache() }
    static let cacheMilliseconds: Int64 = 30_000

    public init(store: any Store) { self.store = store }

    /// The user a request acts as, in `container`.
    /// - Throws: `AUTHENTICATION_REQUIRED` (421) when no user credential is present,
    ///   `AUTHENTICATION_FAILED` (401) when a credential is unknown or belongs to another container.
    public func user(headers authorization: String?, parameters: [String: String], container: String,
                     signInURL: String) throws -> UserAccount {
        var userToken: String?
        if let authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw CloudKitError(.authenticationFailed, "the Authorization header must be 'Bearer <token>'")
            }
            userToken = String(parts[1].withoutSurroundingSpaces)
        }
        if let apiToken = parameters["ckAPIToken"] {
            guard let grant = try grant(for: apiToken), grant.kind == .api, grant.container == container else {
                throw CloudKitError(.authenticationFailed, "ckAPIToken is not an API token of container '\(container)'")
            }
            if userToken == nil { userToken = parameters["ckWebAuthToken"] }
        }
        guard let userToken, !userToken.isEmpty else {
            var error = CloudKitError(.authenticationRequired, "this request needs a signed-in user: send 'Authorization: Bearer <token>' or ckAPIToken with ckWebAuthToken")
            error.redirectURL = signInURL
            throw error
        }
        guard let grant = try grant(for: userToken), grant.kind == .user, let user = grant.user else {
            throw CloudKitError(.authenticationFailed, "the user token is not valid")
        }
        return user
    }

    private func grant(for token: String) throws -> TokenGrant? {
        let hash = Digest.sha256(Array(token.utf8))
        let now = Clock.milliseconds()
        let cache = caches.current
        if let cached = cache.entries[hash], cached.expires > now { return cached.grant }
        guard let grant = try store.read({ try $0.grant(forTokenHash: hash) }) else { return nil }
        if cache.entries.count > 10_000 { cache.entries.removeAll() }
        cache.entries[hash] = (grant, now + Self.cacheMilliseconds)
        return grant
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

/// One thread's cached grants; only its own thread touches it.
final class GrantCache: @unchecked Sendable {
    var entries: [[UInt8]: (grant: TokenGrant, expires: Int64)] = [:]
}
