import TandemCore
import TandemHTTP
import TandemStore

/// `POST /auth/1/{container}/token/exchange?ckAPIToken=…` with `{"idToken": JWT, "device"?}`:
/// an app backend trades an ID token from its own identity provider for a Tandem web auth
/// token (Supabase's "third-party auth"; decisions A22). Only issuers the operator configured
/// for the container (`tandem serve --oidc-exchange CONTAINER,ISSUER,AUDIENCE`) are trusted,
/// with their audience. The backend speaks for the person, so the container's consent is
/// recorded with the first exchange.
///
/// Answers like `signin`: `{ckWebAuthToken, userRecordName, sessionID, expiresAt}`. A token
/// that breaks any rule (signature, issuer, audience, expiry, `alg`, unknown `kid`) is
/// `AUTHENTICATION_FAILED` (401) with the reason, and nothing is created.
enum TokenExchange {
    static func respond(_ context: RequestContext, _ services: Services, container: String) throws -> HTTPResponse {
        // The caller (`AccountRoutes.caller`) checked the API token, from the head, before the body was read.
        let trusted = services.accounts.settings.oidc.exchanges.filter { $0.container == container }
        guard !trusted.isEmpty else {
            throw CloudKitError(.authenticationFailed, "container '\(container)' trusts no identity provider for token exchange (tandem serve --oidc-exchange)")
        }
        let body = try context.jsonBody()
        var credential: [String: String] = [:]
        credential["idToken"] = try AccountRoutes.string(body, "idToken", required: true)
        let method = OIDCSignIn(store: services.store, directory: services.oidc,
                                verifiers: trusted.map { IDTokenVerifier(issuer: $0.issuer, audiences: [$0.audience]) })
        let session = try services.accounts.signIn(with: method, credential: credential, container: container, consent: true,
                                                   device: try AccountRoutes.string(body, "device"), address: context.request.head.remoteAddress)
        return Responses.json(["ckWebAuthToken": .string(session.token), "userRecordName": .string(session.user.recordName),
                               "sessionID": .string(session.id), "expiresAt": .int(session.expiresAt)])
    }
}
