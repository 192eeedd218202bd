import TandemCore
import TandemCrypto
import TandemStore

/// A `SignInMethod` that needs a server challenge first (passkeys; later perhaps others): the
/// page or app asks `challenge`, hands it to the authenticator, then sends the answer as the
/// credential to `AccountService.signIn`.
protocol ChallengeSignInMethod: SignInMethod {
    /// The options for the client's ceremony (JSON, as `PublicKeyCredentialRequestOptions`).
    func challenge(binding: String, container: String, baseURL: String, address: String, at now: Int64) throws -> JSONObject
}

/// Sign-in with a passkey (WebAuthn assertion, ES256; decisions A24–A29). A passkey is a
/// `sign_in_methods` row of kind `passkey`: subject = credential ID (base64url), secret =
/// `es256 <X9.63 public key, base64url> <signature counter>`.
///
/// The credential fields (strings): `credentialID`, `clientDataJSON`, `authenticatorData`,
/// `signature` (each base64url), plus `binding` and `container`, which the caller sets from
/// the request (never from the client's fields): the browser session or app the challenge must
/// have been issued to.
struct PasskeySignIn: ChallengeSignInMethod {
    static let kind = "passkey"
    let store: any Store
    let challenges: PasskeyChallenges
    /// `tandem serve --passkey-rp-id`; nil uses the host of the server's URL.
    let rpID: String?
    /// Whether the UV flag is required (`--passkey-user-verification required`, the default).
    let requireUserVerification: Bool

    func challenge(binding: String, container: String, baseURL: String, address: String, at now: Int64) throws -> JSONObject {
        let party = try PasskeyRelyingParty(baseURL: baseURL, rpID: rpID)
        let issued = try challenges.issue(purpose: .get, binding: binding, container: container, relyingParty: party, address: address, at: now)
        return ["challenge": .string(Base64URL.encode(issued.challenge)), "rpId": .string(party.id),
                "timeout": .int(PasskeyChallenges.lifetimeMilliseconds), "allowCredentials": .array([]),
                "userVerification": .string(requireUserVerification ? "required" : "preferred")]
    }

    /// The options for a sign-up with a passkey (`PublicKeyCredentialCreationOptions`): a
    /// discoverable ES256 credential, no attestation, a random user handle.
    func creationChallenge(email: String, displayName: String?, binding: String, container: String, baseURL: String,
                           address: String, at now: Int64) throws -> JSONObject {
        let party = try PasskeyRelyingParty(baseURL: baseURL, rpID: rpID)
        let issued = try challenges.issue(purpose: .create, binding: binding, container: container, relyingParty: party, email: email,
                                          displayName: displayName, address: address, at: now)
        let verification = requireUserVerification ? "required" : "preferred"
        return ["challenge": .string(Base64URL.encode(issued.challenge)),
                "rp": .object(["id": .string(party.id), "name": .string(container)]),
                "user": .object(["id": .string(Base64URL.encode(Digest.randomBytes(16))), "name": .string(email),
                                 "displayName": .string(displayName ?? email)]),
                "pubKeyCredParams": .array([.object(["type": "public-key", "alg": .int(WebAuthn.es256)])]),
                "timeout": .int(PasskeyChallenges.lifetimeMilliseconds), "attestation": "none",
                "authenticatorSelection": .object(["residentKey": "required", "requireResidentKey": true,
                                                   "userVerification": .string(verification)])]
    }

    /// The credential ID, for the per-account rate limit.
    /// - Throws: `BAD_REQUEST` when it is missing or not base64url of 16–1023 bytes.
    func accountKey(_ credential: [String: String]) throws -> String {
        "passkey:" + (try Self.bytes(credential, "credentialID", 16...1023).encoded)
    }

    /// Checks the assertion, then stores the new signature counter (checked again inside the
    /// write, so two assertions racing with one counter cannot both pass).
    /// - Throws: `BAD_REQUEST` for malformed fields; `AUTHENTICATION_FAILED` with the reason for a
    ///   refused assertion (unknown, used, expired or mismatched challenge; unknown credential;
    ///   wrong type, origin or RP ID; no UP/UV; bad signature; counter regression).
    func authenticate(_ credential: [String: String]) throws -> UserAccount? {
        let id = try Self.bytes(credential, "credentialID", 16...1023)
        let clientDataJSON = try Self.bytes(credential, "clientDataJSON", 1...WebAuthn.maximumClientDataBytes).bytes
        let authenticatorData = try Self.bytes(credential, "authenticatorData", 37...CBOR.maximumBytes).bytes
        let signature = try Self.bytes(credential, "signature", 8...80).bytes
        let now = Clock.milliseconds()
        do {
            let client = try WebAuthn.clientData(clientDataJSON)
            let issued = try challenges.take(client.challenge, purpose: .get, binding: credential["binding"] ?? "",
                                             container: credential["container"] ?? "", at: now)
            guard let (user, method) = try store.read({ try $0.signInMethod(kind: Self.kind, subject: id.encoded) }),
                  let stored = PasskeyCredential(storedSecret: method.secret, id: id.bytes) else { throw WebAuthnError.unknownCredential }
            let count = try WebAuthn.verifyAssertion(clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
                                                     challenge: issued.challenge, relyingParty: issued.relyingParty,
                                                     requireUserVerification: requireUserVerification, stored: stored)
            return try store.write { tx -> UserAccount? in
                guard let (_, current) = try tx.signInMethod(kind: Self.kind, subject: id.encoded),
                      let latest = PasskeyCredential(storedSecret: current.secret, id: id.bytes) else { throw WebAuthnError.unknownCredential }
                _ = try WebAuthn.nextSignCount(stored: latest.signCount, received: count)
                var updated = latest
                updated.signCount = count
                try tx.putSignInMethod(user: user, StoredSignInMethod(kind: Self.kind, subject: id.encoded, secret: StoredPasskey.secret(updated),
                                                                      createdAt: current.createdAt))
                try tx.touchSignInMethod(user: user, kind: Self.kind, subject: id.encoded, at: now)
                return try tx.user(recordNameOrEmail: user)
            }
        } catch let error as WebAuthnError {
            throw error.cloudKitError
        }
    }

    /// A base64url field decoded, with its length checked.
    static func bytes(_ fields: [String: String], _ name: String, _ lengths: ClosedRange<Int>) throws -> (bytes: [UInt8], encoded: String) {
        guard let text = fields[name], !text.isEmpty else { throw CloudKitError.badRequest("'\(name)' is required") }
        guard text.utf8.count <= (lengths.upperBound * 4 + 2) / 3, let bytes = Base64URL.decode(text), lengths.contains(bytes.count) else {
            throw CloudKitError.badRequest("'\(name)' must be base64url of \(lengths.lowerBound)–\(lengths.upperBound) bytes")
        }
        return (bytes, Base64URL.encode(bytes))
    }
}

/// A passkey's stored secret: `es256 <public key, base64url> <counter>`; a pending sign-up link
/// holds `passkey <credential ID> es256 <public key> <counter>` (an Argon2 hash starts with `$`).
enum StoredPasskey {
    static let pendingPrefix = "passkey "

    static func secret(_ credential: PasskeyCredential) -> String {
        "es256 \(Base64URL.encode(credential.publicKey)) \(credential.signCount)"
    }

    static func pending(_ credential: PasskeyCredential) -> String {
        pendingPrefix + Base64URL.encode(credential.id) + " " + secret(credential)
    }

    /// The sign-in method a pending sign-up link's secret describes, or nil when it is not a passkey's.
    static func method(pending: String, at now: Int64) -> StoredSignInMethod? {
        guard pending.hasPrefix(pendingPrefix) else { return nil }
        let parts = pending.dropFirst(pendingPrefix.count).split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        return StoredSignInMethod(kind: PasskeySignIn.kind, subject: String(parts[0]), secret: String(parts[1]), createdAt: now)
    }
}

extension PasskeyCredential {
    /// The credential a stored secret describes, or nil when the secret is not a passkey's.
    init?(storedSecret secret: String, id: [UInt8]) {
        let parts = secret.split(separator: " ")
        guard parts.count == 3, parts[0] == "es256", let key = Base64URL.decode(String(parts[1])), key.count == 65,
              let count = UInt32(parts[2]) else { return nil }
        self.init(id: id, publicKey: key, signCount: count)
    }
}
