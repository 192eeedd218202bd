import Foundation
import TandemCore
import TandemStore

/// What Tandem knows of each OpenID Connect issuer: its discovery document
/// (`ISSUER/.well-known/openid-configuration`, OpenID Connect Discovery 1.0 §4) and its JWK Set
/// (`jwks_uri`), fetched through the outbound-address rule (decisions E1, A21) and kept for
/// `cacheSeconds`. A token naming a `kid` the cached set lacks refetches the set once, at most
/// once per `refetchSeconds` per issuer, so a stream of forged `kid`s cannot make the server
/// fetch in a loop.
final class OIDCProviderDirectory: Sendable {
    /// How long a discovery document and JWK Set are used before they are fetched again.
    static let cacheSeconds: Int64 = 3600
    /// Least time between two refetches of an issuer's JWK Set on an unknown `kid`.
    static let refetchSeconds: Int64 = 60
    /// How long a failed discovery or JWK Set fetch is answered from memory (no new fetch).
    static let failureSeconds: Int64 = 30
    /// Largest discovery document or JWK Set read.
    static let maximumDocumentBytes = 256 * 1024

    struct Metadata: Sendable, Equatable {
        var issuer: String
        var authorizationEndpoint: String
        var tokenEndpoint: String
        var jwksURI: String
    }

    private struct Entry {
        var metadata: Metadata
        var keys: JSONWebKeySet
        var fetchedAt: Int64
        var keysFetchedAt: Int64
    }

    let client: OutboundClient
    private let entries = Locked<[String: Entry]>([:])
    private let attempts = Locked(Attempts())

    init(rule: OutboundRule) {
        client = OutboundClient(rule: rule)
    }

    /// The issuer's discovery document (from the cache when fresh).
    /// - Throws: `IDTokenError.provider` when it cannot be fetched or is not valid.
    func metadata(issuer: String, now: Int64 = Clock.milliseconds() / 1000) throws(IDTokenError) -> Metadata {
        try entry(issuer, now: now).metadata
    }

    /// Verifies `token` with the issuer's keys; refetches the keys once on an unknown `kid`.
    func verify(_ token: String, with verifier: IDTokenVerifier, nonce: String?, now: Int64 = Clock.milliseconds() / 1000) throws(IDTokenError) -> IDTokenClaims {
        // Algorithm and shape first: `alg: none` or a malformed token costs no fetch.
        _ = try verifier.keyReference(CompactJWS(token))
        let entry = try entry(verifier.issuer, now: now)
        do {
            return try verifier.verify(token, keys: entry.keys, nonce: nonce, now: now)
        } catch .unknownKey(let reason) {
            let mayRefetch = entries.withLock { table -> Bool in
                guard var current = table[verifier.issuer], now - current.keysFetchedAt >= Self.refetchSeconds else { return false }
                current.keysFetchedAt = now
                table[verifier.issuer] = current
                return true
            }
            guard mayRefetch else { throw .unknownKey(reason) }
            let keys = try fetchKeys(entry.metadata.jwksURI)
            entries.withLock { $0[verifier.issuer]?.keys = keys }
            return try verifier.verify(token, keys: keys, nonce: nonce, now: now)
        }
    }

    private func entry(_ issuer: String, now: Int64) throws(IDTokenError) -> Entry {
        if let cached = entries.withLock({ $0[issuer] }), now - cached.fetchedAt < Self.cacheSeconds { return cached }
        // One fetch per issuer at a time, and a failed one is remembered for `failureSeconds`: a
        // slow or unreachable issuer holds at most one worker, not one per request (QA).
        let turn = attempts.withLock { state -> Result<Void, IDTokenError> in
            if let failure = state.failures[issuer], now - failure.at < Self.failureSeconds { return .failure(failure.error) }
            guard state.inFlight.insert(issuer).inserted else {
                return .failure(.provider("the issuer \(issuer) is being asked for its keys; try again in a few seconds"))
            }
            return .success(())
        }
        if case .failure(let error) = turn { throw error }
        do {
            let metadata = try fetchMetadata(issuer)
            let keys = try fetchKeys(metadata.jwksURI)
            let entry = Entry(metadata: metadata, keys: keys, fetchedAt: now, keysFetchedAt: now)
            entries.withLock { $0[issuer] = entry }
            attempts.withLock { state in
                state.inFlight.remove(issuer)
                state.failures[issuer] = nil
            }
            return entry
        } catch {
            attempts.withLock { state in
                state.inFlight.remove(issuer)
                state.failures[issuer] = (now, error)
            }
            throw error
        }
    }

    /// Fetches of issuers' documents under way, and recent failures (`entry`).
    private struct Attempts {
        var inFlight: Set<String> = []
        var failures: [String: (at: Int64, error: IDTokenError)] = [:]
    }

    private func fetchMetadata(_ issuer: String) throws(IDTokenError) -> Metadata {
        let url = String(issuer.reversed().drop { $0 == "/" }.reversed()) + "/.well-known/openid-configuration"
        let body = try fetch(url, what: "discovery document")
        guard case .object(let document)? = try? JSONParser.parse(body) else {
            throw .provider("\(url) is not a JSON object")
        }
        func endpoint(_ name: String) throws(IDTokenError) -> String {
            guard case .string(let value)? = document[name], value.hasPrefix("https://") || value.hasPrefix("http://") else {
                throw .provider("\(issuer)'s discovery document has no '\(name)' URL")
            }
            return value
        }
        // OpenID Connect Discovery 1.0 §4.3: the document's issuer must be the one asked for.
        guard case .string(let named)? = document["issuer"], named == issuer else {
            throw .provider("\(url)'s 'issuer' is not '\(issuer)'")
        }
        return Metadata(issuer: issuer, authorizationEndpoint: try endpoint("authorization_endpoint"),
                        tokenEndpoint: try endpoint("token_endpoint"), jwksURI: try endpoint("jwks_uri"))
    }

    private func fetchKeys(_ url: String) throws(IDTokenError) -> JSONWebKeySet {
        try JSONWebKeySet(json: fetch(url, what: "JWK Set"))
    }

    private func fetch(_ url: String, what: String) throws(IDTokenError) -> [UInt8] {
        let response: OutboundClient.Response
        do {
            response = try client.perform(OutboundClient.Request(url: url, headers: [("Accept", "application/json")],
                                                                 maximumResponseBytes: Self.maximumDocumentBytes))
        } catch {
            throw .provider("the \(what) could not be fetched: \(error)")
        }
        guard response.status == 200 else { throw .provider("the \(what) at \(url) answered HTTP \(response.status)") }
        return response.body
    }

    /// Redeems an authorization code at the token endpoint (RFC 6749 §4.1.3 with PKCE's
    /// `code_verifier`, RFC 7636 §4.5); returns the ID token. A client secret is sent with HTTP
    /// Basic authentication (`client_secret_basic`, the default method), a public client sends
    /// its `client_id` in the body.
    /// - Throws: `IDTokenError.provider` when the endpoint refuses or answers no `id_token`.
    func redeem(code: String, metadata: Metadata, clientID: String, clientSecret: String?, redirectURI: String,
                codeVerifier: String) throws(IDTokenError) -> String {
        func form(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? "" }
        var body = "grant_type=authorization_code&code=\(form(code))&redirect_uri=\(form(redirectURI))&code_verifier=\(form(codeVerifier))"
        var headers: [(name: String, value: String)] = [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")]
        if let clientSecret {
            let credentials = Data("\(form(clientID)):\(form(clientSecret))".utf8).base64EncodedString()
            headers.append(("Authorization", "Basic " + credentials))
        } else {
            body += "&client_id=\(form(clientID))"
        }
        let response: OutboundClient.Response
        do {
            response = try client.perform(OutboundClient.Request(method: "POST", url: metadata.tokenEndpoint, headers: headers, body: Array(body.utf8),
                                                                 maximumResponseBytes: Self.maximumDocumentBytes))
        } catch {
            throw .provider("the token endpoint could not be reached: \(error)")
        }
        guard case .object(let answer)? = try? JSONParser.parse(response.body) else {
            throw .provider("the token endpoint answered HTTP \(response.status) without JSON")
        }
        guard response.status == 200, case .string(let idToken)? = answer["id_token"] else {
            let error = if case .string(let e)? = answer["error"] { e } else { "no id_token" }
            throw .provider("the token endpoint refused the code (HTTP \(response.status), \(error))")
        }
        return idToken
    }

    /// RFC 3986 unreserved characters: everything else is percent-encoded in a form body.
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
}
