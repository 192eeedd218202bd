import Foundation
import TandemCore
import TandemCrypto
import TandemStore

extension AccountService {
    /// Starts a sign-up with a passkey: the options for `navigator.credentials.create`, bound to
    /// `binding`, `container`, the email and the name (decision A28).
    /// - Throws: `BAD_REQUEST` for a malformed email or a name over 200 characters, or when the
    ///   server's URL gives no RP ID (an IP address); `THROTTLED` past 30 open challenges per address.
    func passkeySignUpOptions(email rawEmail: String, displayName: String?, binding: String, container: String,
                              baseURL: String, address: String) throws -> JSONObject {
        let email = try EmailAddress.normalize(rawEmail)
        let name = displayName?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        guard (name?.count ?? 0) <= 200 else { throw CloudKitError.badRequest("'name' is at most 200 characters") }
        return try passkey.creationChallenge(email: email, displayName: name, binding: binding, container: container, baseURL: baseURL,
                                             address: address, at: Clock.milliseconds())
    }

    /// Finishes a sign-up with a passkey (A28, following A4): the registration is verified
    /// (`clientDataJSON`, `attestationObject`, base64url), then, as a password sign-up does, only a
    /// sign-up link holding the passkey is stored and mailed for a new email; the account and its
    /// passkey exist once the link is followed. The answer is the same for a known email (its
    /// owner is told by email and the passkey is dropped).
    /// - Throws: `BAD_REQUEST` for malformed fields; `AUTHENTICATION_FAILED` with the reason for a
    ///   refused registration or a passkey registered already; `THROTTLED` after too many
    ///   sign-ups from `address`.
    func signUpWithPasskey(_ fields: [String: String], binding: String, container: String, address: String, linkBase: String?) throws {
        let clientDataJSON = try PasskeySignIn.bytes(fields, "clientDataJSON", 1...WebAuthn.maximumClientDataBytes).bytes
        let attestationObject = try PasskeySignIn.bytes(fields, "attestationObject", 37...CBOR.maximumBytes).bytes
        let now = Clock.milliseconds()
        try limiter.signUp(address: address, at: now)
        let credential: PasskeyCredential
        let issued: PasskeyChallenges.Issued
        do {
            let client = try WebAuthn.clientData(clientDataJSON)
            issued = try passkey.challenges.take(client.challenge, purpose: .create, binding: binding, container: container, at: now)
            credential = try WebAuthn.verifyRegistration(clientDataJSON: clientDataJSON, attestationObject: attestationObject,
                                                         challenge: issued.challenge, relyingParty: issued.relyingParty,
                                                         requireUserVerification: passkey.requireUserVerification)
            if try store.read({ try $0.signInMethod(kind: PasskeySignIn.kind, subject: Base64URL.encode(credential.id)) }) != nil {
                throw WebAuthnError.credentialRegistered
            }
        } catch let error as WebAuthnError {
            throw error.cloudKitError
        }
        guard let email = issued.email else { throw WebAuthnError.challengeMismatch.cloudKitError }
        let existing = try store.read { try $0.user(recordNameOrEmail: email) }.flatMap { $0.email?.lowercased() == email ? $0 : nil }
        guard existing == nil else {
            send(AccountMail.alreadyRegistered(to: email))
            return
        }
        let secret = Tokens.random(prefix: "")
        let link = AccountLink(hash: Tokens.hash(secret), purpose: .signup, email: email, displayName: issued.displayName,
                               pendingSecret: StoredPasskey.pending(credential), createdAt: now,
                               expiresAt: now + settings.linkLifetimeSeconds * 1000)
        try store.write { try $0.addAccountLink(link) }
        sendLink(linkBase, secret) { AccountMail.signUp(to: email, link: $0) }
    }
}
