import TandemCore

/// Checks an OpenID Connect ID token (OpenID Connect Core 1.0 §3.1.3.7; RFC 7519) against one
/// trusted issuer, decisions A18–A19:
///
/// 1. a compact JWS whose header `alg` is one this verifier allows (`RS256`, `ES256`); `none`
///    and every other algorithm are refused before any key is looked at;
/// 2. the header's `kid` names a key of the issuer's JWK Set that fits the algorithm (no `kid`:
///    the set must hold exactly one fitting key), and the signature verifies with it;
/// 3. `iss` equals the issuer exactly; `aud` (a string or an array) contains one of `audiences`;
/// 4. `exp` is after now, `nbf` (when present) and `iat` are not after now, each with
///    `clockSkewSeconds` of leeway; `sub` is a non-empty string of at most 255 bytes;
/// 5. `nonce` equals the one sent in the authorization request, when one was sent.
struct IDTokenVerifier: Sendable {
    /// Leeway for clocks that disagree, in seconds.
    static let clockSkewSeconds: Int64 = 60

    var issuer: String
    /// Accepted audiences: the client ID (sign-in) or the operator's configured audience (exchange).
    var audiences: [String]
    var algorithms: Set<String> = ["RS256", "ES256"]

    /// The header's algorithm and key ID, checked against the allowed algorithms; nothing verified.
    /// - Throws: `IDTokenError.malformed`, `.algorithm`.
    func keyReference(_ jws: CompactJWS) throws(IDTokenError) -> (algorithm: String, kid: String?) {
        guard case .string(let alg)? = jws.header["alg"] else { throw .malformed("the JWT header has no 'alg'") }
        guard alg != "none", alg.lowercased() != "none" else { throw .algorithm("'alg: none' (an unsigned token) is never accepted") }
        guard algorithms.contains(alg) else {
            throw .algorithm("'alg: \(alg)' is not accepted (accepted: \(algorithms.sorted().joined(separator: ", ")))")
        }
        switch jws.header["kid"] {
        case nil: return (alg, nil)
        case .string(let kid)?: return (alg, kid)
        default: throw .malformed("the JWT header's 'kid' is not a string")
        }
    }

    /// The verified claims of `token`.
    /// - Parameters:
    ///   - keys: the issuer's JWK Set.
    ///   - nonce: the nonce sent in the authorization request, or nil when none was (token exchange).
    ///   - now: the time in seconds since 1970.
    /// - Throws: `IDTokenError` naming the first rule the token breaks.
    func verify(_ token: String, keys: JSONWebKeySet, nonce: String?, now: Int64) throws(IDTokenError) -> IDTokenClaims {
        let jws = try CompactJWS(token)
        let (algorithm, kid) = try keyReference(jws)
        guard let key = keys.key(kid: kid, algorithm: algorithm) else {
            throw .unknownKey(kid.map { "the key 'kid: \($0)' is not in the issuer's JWK Set" }
                              ?? "the token names no 'kid' and the issuer's JWK Set has more or fewer than one \(algorithm) key")
        }
        guard key.verifies(jws.signature, of: jws.signingInput, algorithm: algorithm) else {
            throw .signature("the signature does not verify with the issuer's key")
        }
        return try claims(jws.payload, nonce: nonce, now: now)
    }

    /// Checks the claims of a payload whose signature was verified.
    func claims(_ payload: JSONObject, nonce: String?, now: Int64) throws(IDTokenError) -> IDTokenClaims {
        guard case .string(let iss)? = payload["iss"], iss == issuer else {
            throw .issuer("the token's issuer is not '\(issuer)'")
        }
        let audience: [String]
        switch payload["aud"] {
        case .string(let one)?: audience = [one]
        case .array(let list)?: audience = list.compactMap { if case .string(let s) = $0 { s } else { nil } }
        default: audience = []
        }
        guard audience.contains(where: audiences.contains) else {
            throw .audience("the token's audience does not include '\(audiences.joined(separator: "' or '"))'")
        }
        func seconds(_ name: String) throws(IDTokenError) -> Int64? {
            switch payload[name] {
            case nil: return nil
            case .int(let n)?: return n
            case .double(let d)? where d.isFinite && abs(d) < 1e15: return Int64(d)
            default: throw .malformed("'\(name)' is not a number of seconds")
            }
        }
        guard let exp = try seconds("exp") else { throw .malformed("the token has no 'exp'") }
        guard exp > now - Self.clockSkewSeconds else { throw .expired("the token expired at \(exp) (now \(now))") }
        if let nbf = try seconds("nbf"), nbf > now + Self.clockSkewSeconds { throw .expired("the token is not valid before \(nbf) (now \(now))") }
        guard let iat = try seconds("iat") else { throw .malformed("the token has no 'iat'") }
        guard iat <= now + Self.clockSkewSeconds else { throw .expired("the token was issued in the future (\(iat), now \(now))") }
        guard case .string(let sub)? = payload["sub"], !sub.isEmpty, sub.utf8.count <= 255 else {
            throw .malformed("'sub' must be a string of 1–255 bytes")
        }
        if let nonce {
            guard case .string(let sent)? = payload["nonce"], sent == nonce else { throw .nonce("the token's nonce is not the one this sign-in sent") }
        }
        var claims = IDTokenClaims(issuer: iss, subject: sub, audience: audience, expiresAt: exp)
        if case .string(let email)? = payload["email"] { claims.email = email }
        // Some providers send the boolean as a string.
        claims.emailVerified = payload["email_verified"] == .bool(true) || payload["email_verified"] == .string("true")
        if case .string(let name)? = payload["name"] { claims.name = name }
        return claims
    }
}

/// What a verified ID token says.
struct IDTokenClaims: Sendable, Equatable {
    var issuer: String
    var subject: String
    var audience: [String]
    /// Seconds since 1970.
    var expiresAt: Int64
    var email: String?
    /// `email_verified: true`: the provider vouches that the subject controls `email`.
    var emailVerified = false
    var name: String?

    /// The sign-in method row's subject: `issuer|sub` (A20).
    var methodSubject: String { issuer + "|" + subject }
}

/// Why an ID token was refused; every case answers `AUTHENTICATION_FAILED` with the reason.
enum IDTokenError: Error, Equatable, CustomStringConvertible {
    case malformed(String)
    case algorithm(String)
    case unknownKey(String)
    case signature(String)
    case issuer(String)
    case audience(String)
    case expired(String)
    case nonce(String)
    /// The provider could not be asked (discovery or JWKS fetch failed or was refused).
    case provider(String)

    var description: String {
        switch self {
        case .malformed(let s), .algorithm(let s), .unknownKey(let s), .signature(let s), .issuer(let s), .audience(let s),
             .expired(let s), .nonce(let s), .provider(let s): s
        }
    }
}
