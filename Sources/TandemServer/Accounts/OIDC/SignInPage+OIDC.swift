import Foundation
import TandemCore
import TandemCrypto
import TandemHTTP
import TandemStore

/// "Sign in with NAME" on the sign-in page: OpenID Connect's authorization code flow with PKCE
/// (RFC 7636, `S256`), `state` and `nonce` (decisions A23).
///
/// `GET /signin/oidc/start?ckAPIToken=…&provider=NAME` sets a flow cookie (`tandem_oidc`: 32
/// random bytes, `HttpOnly`, `SameSite=Lax` so it comes back on the provider's redirect,
/// `Path=/signin/oidc`, 10 minutes) and redirects to the provider's authorization endpoint. The
/// PKCE verifier and the nonce are HMACs of that cookie under the server secret, so neither
/// leaves the server and no flow is stored. `state` carries the container, provider, expiry
/// and API token, with an HMAC over them and the cookie: a callback is accepted only in the
/// browser that started it, before it expires. `GET /signin/oidc/callback` redeems the code at
/// the token endpoint, verifies the ID token (issuer, audience = client ID, nonce), links or
/// creates the account (`OIDCSignIn`), asks consent on a first sign-in to the app, and
/// completes exactly as a password sign-in does.
extension SignInPage {
    static let flowCookie = "tandem_oidc"
    /// How long a started provider sign-in may take.
    static let flowMilliseconds: Int64 = 10 * 60 * 1000

    /// The names of the providers offered for an app's container (none for a share page's
    /// sign-in, A47).
    func providerNames(_ app: SignInApp) -> [String] {
        guard app.apiToken != nil else { return [] }
        return services.accounts.settings.oidc.providers(container: app.container).map(\.name)
    }

    func startProviderSignIn(_ context: RequestContext) throws -> HTTPResponse {
        let app: SignInApp
        switch try self.app(["ckAPIToken": context.parameters["ckAPIToken"] ?? ""]) {
        case .failure(let problem): return page(SignInHTML.problem(problem.message), status: problem.status, origins: [])
        case .success(let found): app = found
        }
        let container = app.container
        guard let apiToken = app.apiToken, let provider = services.accounts.settings.oidc.providers(container: container).first(where: { $0.name == context.parameters["provider"] }) else {
            return page(SignInHTML.problem("This app offers no sign-in provider of that name."), status: 404, origins: app.origins)
        }
        let metadata: OIDCProviderDirectory.Metadata
        do {
            metadata = try services.oidc.metadata(issuer: provider.issuer)
        } catch {
            services.accounts.log.message("accounts: OpenID Connect provider \(provider.name) (\(provider.issuer)) cannot be used: \(error)")
            return page(SignInHTML.problem("\(provider.name) cannot be reached right now. Try again later."), status: 502, origins: app.origins)
        }
        let flow = Tokens.random(prefix: "")
        let state = ProviderFlow.state(container: container, provider: provider.name, apiToken: apiToken, flow: flow, secret: services.secret,
                                       expiresAt: Clock.milliseconds() + Self.flowMilliseconds)
        func q(_ value: String) -> String { value.addingPercentEncoding(withAllowedCharacters: OIDCProviderDirectory.unreserved) ?? "" }
        let query = [("response_type", "code"), ("client_id", provider.clientID), ("redirect_uri", redirectURI(context)),
                     ("scope", "openid email profile"), ("state", state), ("nonce", ProviderFlow.nonce(flow: flow, secret: services.secret)),
                     ("code_challenge", ProviderFlow.challenge(flow: flow, secret: services.secret)), ("code_challenge_method", "S256")]
            .map { "\($0.0)=\(q($0.1))" }.joined(separator: "&")
        let location = metadata.authorizationEndpoint + (metadata.authorizationEndpoint.contains("?") ? "&" : "?") + query
        let secure = context.baseURL.hasPrefix("https://") ? "; Secure" : ""
        var response = HTTPResponse(status: 303, headers: [("location", location)], body: [])
        response.headers += Self.securityHeaders(origins: app.origins)
        response.headers.append(("set-cookie", "\(Self.flowCookie)=\(flow); Path=/signin/oidc; HttpOnly; SameSite=Lax; Max-Age=600\(secure)"))
        return response
    }

    func finishProviderSignIn(_ context: RequestContext) throws -> HTTPResponse {
        var response = try providerCallback(context)
        // The flow cookie works once.
        response.headers.append(("set-cookie", "\(Self.flowCookie)=; Path=/signin/oidc; HttpOnly; SameSite=Lax; Max-Age=0"))
        return response
    }

    private func providerCallback(_ context: RequestContext) throws -> HTTPResponse {
        let parameters = context.parameters
        guard let flow = Self.cookies(context.request.head.headers["cookie"])[Self.flowCookie], flow.count == 43,
              let started = ProviderFlow.check(parameters["state"] ?? "", flow: flow, secret: services.secret, now: Clock.milliseconds()) else {
            return page(SignInHTML.problem("This sign-in expired or was started in another browser. Go back to the app and sign in again."),
                        status: 403, origins: [])
        }
        let app: SignInApp
        switch try self.app(["ckAPIToken": started.apiToken]) {
        case .failure(let problem): return page(SignInHTML.problem(problem.message), status: problem.status, origins: [])
        case .success(let found): app = found
        }
        let container = app.container
        guard container == started.container,
              let provider = services.accounts.settings.oidc.providers(container: container).first(where: { $0.name == started.provider }) else {
            return page(SignInHTML.problem("This app no longer offers that sign-in provider."), status: 404, origins: app.origins)
        }
        if let error = parameters["error"] {
            return completion(nil, errorMessage: "\(provider.name) did not sign you in (\(error)).", app)
        }
        guard let code = parameters["code"], !code.isEmpty, code.utf8.count <= 4096 else {
            return page(SignInHTML.problem("\(provider.name) sent no authorization code."), status: 400, origins: app.origins)
        }
        let accounts = services.accounts
        do {
            let metadata = try services.oidc.metadata(issuer: provider.issuer)
            let idToken = try services.oidc.redeem(code: code, metadata: metadata, clientID: provider.clientID, clientSecret: provider.clientSecret,
                                                   redirectURI: redirectURI(context),
                                                   codeVerifier: ProviderFlow.verifier(flow: flow, secret: services.secret))
            let method = OIDCSignIn(store: services.store, directory: services.oidc,
                                    verifiers: [IDTokenVerifier(issuer: provider.issuer, audiences: [provider.clientID])],
                                    nonce: ProviderFlow.nonce(flow: flow, secret: services.secret))
            let session = try accounts.signIn(with: method, credential: ["idToken": idToken], container: container, consent: false,
                                              device: context.request.head.headers["user-agent"], address: context.request.head.remoteAddress)
            return complete(session.token, app)
        } catch let consent as AccountService.ConsentRequired {
            // The page's own CSRF cookie is SameSite=Strict, so it did not come with the
            // provider's redirect: the consent form gets it (or a new one) now.
            let (cookie, setCookie) = csrfCookie(context)
            let ticket = Ticket.make(user: consent.user.recordName, container: container, secret: services.secret,
                                     expiresAt: Clock.milliseconds() + Self.ticketMilliseconds)
            var response = page(SignInHTML.consent(app: app, email: consent.user.email ?? provider.name + " account", csrf: csrfToken(cookie),
                                                   ticket: ticket), status: 200, origins: app.origins)
            if let setCookie { response.headers.append(("set-cookie", setCookie)) }
            return response
        } catch let error as IDTokenError {
            accounts.log.message("accounts: sign-in with \(provider.name) failed: \(error)")
            return page(SignInHTML.problem("\(provider.name) could not sign you in: \(error)"), status: 502, origins: app.origins)
        } catch let error as CloudKitError {
            let status = error.code == .throttled ? 429 : error.code == .tryAgainLater ? 502 : 401
            return page(SignInHTML.problem("\(provider.name) could not sign you in: \(error.reason)"), status: status, origins: app.origins)
        }
    }

    /// The callback URL registered at the provider.
    func redirectURI(_ context: RequestContext) -> String { context.baseURL + "/signin/oidc/callback" }
}

/// The values of one provider sign-in, derived from its flow cookie under the server secret.
enum ProviderFlow {
    /// PKCE's `code_verifier`: 43 base64url characters (RFC 7636 §4.1).
    static func verifier(flow: String, secret: [UInt8]) -> String {
        Base64URL.encode(Digest.hmacSHA256(key: secret, message: Array(("oidc-verifier|" + flow).utf8)))
    }

    /// `code_challenge` for `S256`: base64url(SHA-256(verifier)) (RFC 7636 §4.2).
    static func challenge(flow: String, secret: [UInt8]) -> String {
        Base64URL.encode(Digest.sha256(Array(verifier(flow: flow, secret: secret).utf8)))
    }

    static func nonce(flow: String, secret: [UInt8]) -> String {
        Digest.hex(Digest.hmacSHA256(key: secret, message: Array(("oidc-nonce|" + flow).utf8)))
    }

    /// `base64url(container|provider|expiry|apiToken).mac`, the MAC binding it to the flow cookie.
    static func state(container: String, provider: String, apiToken: String, flow: String, secret: [UInt8], expiresAt: Int64) -> String {
        let payload = Base64URL.encode(Array([container, provider, String(expiresAt), apiToken].joined(separator: "\n").utf8))
        return payload + "." + mac(payload, flow: flow, secret: secret)
    }

    /// What a genuine, unexpired `state` made with this flow cookie carries; nil otherwise.
    static func check(_ state: String, flow: String, secret: [UInt8], now: Int64) -> (container: String, provider: String, apiToken: String)? {
        let parts = state.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, state.utf8.count <= 2048,
              Digest.equal(Array(mac(parts[0], flow: flow, secret: secret).utf8), Array(parts[1].utf8)),
              let bytes = Base64URL.decode(parts[0]) else { return nil }
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 4, let expiry = Int64(fields[2]), expiry > now else { return nil }
        return (fields[0], fields[1], fields[3])
    }

    private static func mac(_ payload: String, flow: String, secret: [UInt8]) -> String {
        Digest.hex(Digest.hmacSHA256(key: secret, message: Array(("oidc-state|" + flow + "|" + payload).utf8)))
    }
}
