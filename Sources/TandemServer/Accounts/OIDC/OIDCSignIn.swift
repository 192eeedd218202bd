import TandemCore
import TandemStore

/// An ID token from a trusted OpenID Connect issuer as a `SignInMethod` (kind `oidc`): the
/// token exchange (`POST /auth/1/{container}/token/exchange`) and the sign-in page's provider
/// buttons both end here. The credential is `{"idToken": JWT}`.
///
/// Account linking (decisions A20): the identity is `issuer|sub`, stored as the method's
/// subject; an identity already linked signs in to its account. A new identity is linked to the
/// account holding its email only when the token says `email_verified: true` (and that account's
/// email is verified, or it has no sign-in method yet); otherwise a new account is made, with
/// the email when verified and free, else without one. An unverified email never links to or
/// creates anything under that address.
struct OIDCSignIn: SignInMethod {
    static let kind = "oidc"
    let store: any Store
    let directory: OIDCProviderDirectory
    /// One per trusted issuer; the token's `iss` picks which.
    let verifiers: [IDTokenVerifier]
    /// The nonce of the authorization request (sign-in page), nil for an exchange.
    var nonce: String?

    /// `issuer|sub` as the token claims them, unverified: for rate limits only.
    /// - Throws: `BAD_REQUEST` with the reason when `idToken` is missing or is not shaped as an
    ///   ID token (`shape`); nothing is counted against the rate limits then.
    func accountKey(_ credential: [String: String]) throws -> String {
        guard let token = credential["idToken"], !token.isEmpty else { throw CloudKitError.badRequest("'idToken' is required") }
        let jws = try Self.shape(token)
        let iss = if case .string(let s)? = jws.payload["iss"] { s } else { "" }
        let sub = if case .string(let s)? = jws.payload["sub"] { s } else { "" }
        return "oidc:" + iss + "|" + sub
    }

    /// The token as a JWS whose shape is an ID token's, checked without any key (decisions A41):
    /// three base64url parts (at most 16 KiB), a header and payload that are JSON objects, a
    /// header `alg` that is a string and a `kid` that is a string when present, and a payload
    /// `iss` that is a string. A token that fails here is malformed input, not a credential
    /// that failed: whether it is signed, by whom, for whom and until when is judged by
    /// `IDTokenVerifier` (`AUTHENTICATION_FAILED`).
    /// - Throws: `BAD_REQUEST` naming the first problem.
    static func shape(_ token: String) throws -> CompactJWS {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(token)
        } catch {
            throw CloudKitError.badRequest("'idToken' is not a JWT (header.payload.signature): \(error)")
        }
        guard case .string? = jws.header["alg"] else { throw CloudKitError.badRequest("'idToken' is malformed: its header has no 'alg' string") }
        switch jws.header["kid"] {
        case nil, .string?: break
        default: throw CloudKitError.badRequest("'idToken' is malformed: its header's 'kid' is not a string")
        }
        guard case .string? = jws.payload["iss"] else { throw CloudKitError.badRequest("'idToken' is malformed: its payload has no 'iss' string") }
        return jws
    }

    /// The account the verified token proves, linked or made now.
    /// - Throws: `AUTHENTICATION_FAILED` naming the rule the token broke (nothing is created),
    ///   `TRY_AGAIN_LATER` when the issuer's keys cannot be fetched.
    func authenticate(_ credential: [String: String]) throws -> UserAccount? {
        let token = credential["idToken"] ?? ""
        let claims: IDTokenClaims
        do {
            let jws = try CompactJWS(token)
            let issuer = if case .string(let s)? = jws.payload["iss"] { s } else { "" }
            guard let verifier = verifiers.first(where: { $0.issuer == issuer }) else {
                throw IDTokenError.issuer("the token's issuer '\(issuer)' is not trusted here")
            }
            claims = try directory.verify(token, with: verifier, nonce: nonce)
        } catch let error as IDTokenError {
            if case .provider(let reason) = error { throw CloudKitError(.tryAgainLater, "the identity provider could not be asked: \(reason)") }
            throw CloudKitError(.authenticationFailed, "the ID token was refused: \(error)")
        }
        return try link(claims)
    }

    /// The account of a verified identity (the linking rule above), in one transaction.
    func link(_ claims: IDTokenClaims) throws -> UserAccount {
        let subject = claims.methodSubject
        let verifiedEmail = claims.emailVerified ? claims.email.flatMap { try? EmailAddress.normalize($0) } : nil
        let name = claims.name.map { String($0.prefix(200)) }
        let now = Clock.milliseconds()
        return try store.write { tx in
            if let linked = try tx.user(signInKind: Self.kind, subject: subject) {
                try tx.touchSignInMethod(user: linked.recordName, kind: Self.kind, subject: subject, at: now)
                return linked
            }
            var user: UserAccount
            if let email = verifiedEmail, let existing = try tx.user(recordNameOrEmail: email), existing.email?.lowercased() == email {
                let verified = try tx.profile(user: existing.recordName)?.emailVerified ?? false
                let hasMethods = try !tx.signInMethods(user: existing.recordName).isEmpty
                if !verified && hasMethods {
                    throw CloudKitError(.authenticationFailed,
                                        "an account with the email \(email) exists but its email is not verified; sign in to it first (or verify it) to link this identity")
                }
                if !verified { try tx.setEmailVerified(user: existing.recordName, true) }
                user = existing
            } else {
                user = try tx.addProviderUser(email: verifiedEmail, displayName: name, at: now)
            }
            try tx.putSignInMethod(user: user.recordName, StoredSignInMethod(kind: Self.kind, subject: subject, secret: "", createdAt: now, lastUsedAt: now))
            return user
        }
    }
}
