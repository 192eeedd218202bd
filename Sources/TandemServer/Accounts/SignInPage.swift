import Foundation
import TandemCore
import TandemCrypto
import TandemHTTP
import TandemStore

/// The web sign-in page at the `redirectURL` of `AUTHENTICATION_REQUIRED` answers (`/signin`,
/// with the app's `ckAPIToken`), completing CloudKit JS's flow (issue 16; decisions A8–A10), and
/// the share page's "Sign in" (`/signin?return=/share/{shortGUID}`, A47; `SignInApp`):
///
/// - `GET /signin` — email and password form; `GET /signin/signup` — the sign-up form.
/// - `POST /signin`, `POST /signin/signup`, `POST /signin/consent` — the forms' targets.
/// - `GET /signin/account/delete`, `POST /signin/account/delete` — deleting the account, confirmed
///   with email and password (decisions A15; `SignInPage+AccountDelete.swift`).
/// - `GET /signin/signin.js`, `GET /signin/signin.css` — the only script and stylesheet.
/// - `GET /signin/oidc/start`, `GET /signin/oidc/callback` — "Sign in with NAME" through an
///   OpenID Connect provider (`SignInPage+OIDC.swift`).
/// - `POST /signin/passkey/options`, `POST /signin/passkey`, `POST /signin/passkey/signup` —
///   passkeys (SignInPage+Passkeys.swift).
///
/// Every form carries a CSRF token: the HMAC of a random cookie (`tandem_csrf`, `SameSite=Strict`,
/// `HttpOnly`), checked in constant time. The finished sign-in hands the web auth token back as
/// the API token says: posted to `window.opener` at each of the token's allowed origins (never
/// `*`: a window of another origin receives nothing), or a redirect to its callback URL with
/// `ckWebAuthToken=` appended. An API token with no allowed origin cannot complete a popup sign-in.
struct SignInPage {
    let services: Services

    static let csrfCookie = FormCSRF.cookieName
    /// How long the consent step may wait after the password was checked.
    static let ticketMilliseconds: Int64 = 10 * 60 * 1000

    func respond(_ context: RequestContext) throws -> HTTPResponse {
        let head = context.request.head
        switch (head.method, head.path) {
        case ("GET", "/signin/signin.js"), ("HEAD", "/signin/signin.js"):
            return HTTPResponse(status: 200, headers: [("content-type", "text/javascript; charset=utf-8"), ("cache-control", "public, max-age=300"),
                                                       ("x-content-type-options", "nosniff")], body: Array((SignInHTML.script + PasskeyHTML.script).utf8))
        case ("GET", "/signin/signin.css"), ("HEAD", "/signin/signin.css"):
            return HTTPResponse(status: 200, headers: [("content-type", "text/css; charset=utf-8"), ("cache-control", "public, max-age=300"),
                                                       ("x-content-type-options", "nosniff")], body: Array(SignInHTML.stylesheet.utf8))
        case ("GET", "/signin"), ("GET", "/signin/signup"):
            return try showForm(context, signUp: head.path == "/signin/signup", fields: context.parameters)
        case ("POST", "/signin"):
            return try submitSignIn(context)
        case ("POST", "/signin/signup"):
            return try submitSignUp(context)
        case ("POST", "/signin/consent"):
            return try submitConsent(context)
        case ("GET", Self.deletePath):
            return try showDeleteForm(context)
        case ("POST", Self.deletePath):
            return try submitDelete(context)
        case ("POST", "/signin/passkey/options"), ("POST", "/signin/passkey"), ("POST", "/signin/passkey/signup"):
            return try respondPasskey(context)
        case (_, "/signin/passkey/options"), (_, "/signin/passkey"), (_, "/signin/passkey/signup"):
            throw MethodNotAllowed(allowed: "POST")
        case ("GET", "/signin/verify"), ("GET", "/signin/password"), ("GET", "/signin/reset"):
            return try showLinkForm(context)
        case ("POST", "/signin/verify"), ("POST", "/signin/password"), ("POST", "/signin/reset"):
            return try submitLinkForm(context)
        case ("GET", "/signin/oidc/start"):
            return try startProviderSignIn(context)
        case ("GET", "/signin/oidc/callback"):
            return try finishProviderSignIn(context)
        case (_, "/signin/oidc/start"), (_, "/signin/oidc/callback"):
            throw MethodNotAllowed(allowed: "GET")
        case (_, "/signin"), (_, "/signin/signup"), (_, "/signin/consent"), (_, Self.deletePath), (_, "/signin/verify"), (_, "/signin/password"), (_, "/signin/reset"):
            throw MethodNotAllowed(allowed: head.path == "/signin/consent" ? "POST" : "GET, POST")
        default:
            throw CloudKitError(.notFound, "no page at \(head.path)")
        }
    }

    // MARK: Steps

    /// The app the page's query or form fields name (`SignInApp.resolve`), or a problem page's message.
    func app(_ fields: [String: String]) throws -> Result<SignInApp, PageProblem> {
        try SignInApp.resolve(fields, store: services.store)
    }

    private func showForm(_ context: RequestContext, signUp: Bool, fields: [String: String]) throws -> HTTPResponse {
        let app: SignInApp
        switch try self.app(fields) {
        case .failure(let problem): return page(SignInHTML.problem(problem.message), status: problem.status, origins: [])
        case .success(let found): app = found
        }
        let (cookie, setCookie) = csrfCookie(context)
        let csrf = csrfToken(cookie)
        let html = signUp ? SignInHTML.signUpForm(app: app, csrf: csrf)
            : SignInHTML.signInForm(app: app, csrf: csrf, providers: providerNames(app))
        var response = page(html, status: 200, origins: app.origins)
        if let setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    private func submitSignIn(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, csrf) = try checkForm(context, fields) else { return forbidden() }
        let accounts = services.accounts
        func again(_ message: String, status: Int) -> HTTPResponse {
            page(SignInHTML.signInForm(app: app, csrf: csrf, email: fields["email"] ?? "", error: message, providers: providerNames(app)),
                 status: status, origins: app.origins)
        }
        do {
            return try signIn(with: accounts.password, credential: fields, app: app, csrf: csrf, context)
        } catch let error as CloudKitError {
            switch error.code {
            case .throttled:
                var response = again("Too many attempts. Try again in \(error.retryAfter ?? 60) seconds.", status: 429)
                response.headers.append(("retry-after", String(error.retryAfter ?? 60)))
                return response
            case .badRequest: return again("Enter your email address and password.", status: 400)
            default: return again("The email or password is wrong.", status: 401)
            }
        }
    }

    /// Signs in with `method` for `app` and completes (A8): an app's first sign-in shows the
    /// consent step instead (A10); a share page's sign-in needs no consent and, for a share URL
    /// that names no share, returns the person without a session (A47).
    /// - Throws: the `CloudKitError` of a refused credential, for the caller's form.
    func signIn(with method: any SignInMethod, credential: [String: String], app: SignInApp, csrf: String,
                _ context: RequestContext) throws -> HTTPResponse {
        let accounts = services.accounts
        let device = context.request.head.headers["user-agent"], address = context.request.head.remoteAddress
        guard app.asksConsent else {
            let user = try accounts.authenticate(with: method, credential: credential, address: address)
            guard !app.container.isEmpty else { return completion(nil, errorMessage: nil, app) }
            return complete(try accounts.issueSession(user: user, container: app.container, device: device, at: Clock.milliseconds()).token, app)
        }
        do {
            let session = try accounts.signIn(with: method, credential: credential, container: app.container, consent: false,
                                              device: device, address: address)
            return complete(session.token, app)
        } catch let consent as AccountService.ConsentRequired {
            let ticket = Ticket.make(user: consent.user.recordName, container: app.container, secret: services.secret,
                                     expiresAt: Clock.milliseconds() + Self.ticketMilliseconds)
            return page(SignInHTML.consent(app: app, email: consent.user.email ?? "", csrf: csrf, ticket: ticket), status: 200, origins: app.origins)
        }
    }

    private func submitSignUp(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, csrf) = try checkForm(context, fields) else { return forbidden() }
        do {
            try services.accounts.signUp(email: fields["email"] ?? "", password: fields["password"], displayName: fields["name"],
                                         address: context.request.head.remoteAddress,
                                         linkBase: context.mailLinkBaseURL.map { $0 + "/signin/verify?" + app.query })
            return page(SignInHTML.checkEmail(app: app), status: 200, origins: app.origins)
        } catch let error as CloudKitError where error.code == .badRequest || error.code == .throttled {
            let message = error.code == .throttled ? "Too many sign-ups from here. Try again later." : error.reason
            return page(SignInHTML.signUpForm(app: app, csrf: csrf, error: message), status: error.code == .throttled ? 429 : 400, origins: app.origins)
        }
    }

    private func submitConsent(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, _) = try checkForm(context, fields) else { return forbidden() }
        let container = app.container
        guard app.asksConsent, let user = Ticket.check(fields["ticket"] ?? "", container: container, secret: services.secret, now: Clock.milliseconds()),
              let account = try services.store.read({ try $0.user(recordNameOrEmail: user) }) else {
            return page(SignInHTML.problem("This step expired. Sign in again."), status: 403, origins: app.origins)
        }
        guard fields["decision"] == "allow" else {
            return completion(nil, errorMessage: "The user did not allow this app to use their account.", app)
        }
        let now = Clock.milliseconds()
        try services.store.write { try $0.addConsent(user: user, container: container, at: now) }
        let session = try services.accounts.issueSession(user: account, container: container, device: context.request.head.headers["user-agent"], at: now)
        return complete(session.token, app)
    }

    // MARK: Emailed links

    /// The page an emailed link opens (`verify`: confirm; `password`: choose a new password) or the
    /// reset request form (`reset`). A GET changes nothing (mail scanners open links); the form's
    /// POST does.
    private func showLinkForm(_ context: RequestContext) throws -> HTTPResponse {
        let app: SignInApp
        switch try self.app(context.parameters) {
        case .failure(let problem): return page(SignInHTML.problem(problem.message), status: problem.status, origins: [])
        case .success(let found): app = found
        }
        let (cookie, setCookie) = csrfCookie(context)
        let step = String(context.request.head.path.dropFirst("/signin/".count))
        // A link that cannot be followed says so at once, read only (A46).
        if let purpose = Self.linkPurpose(step) {
            do {
                try services.accounts.checkLink(context.parameters["token"] ?? "", purpose)
            } catch let error as CloudKitError {
                return page(SignInHTML.problem("This link cannot be used: \(error.reason)."), status: AccountLinkRefusal.pageStatus(error, fallback: 403),
                            origins: app.origins)
            }
        }
        let html = SignInHTML.linkForm(step: step, csrf: csrfToken(cookie), app: app, linkToken: context.parameters["token"] ?? "")
        var response = page(html, status: 200, origins: app.origins)
        if let setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    /// The link an emailed-link page follows: `verify` a sign-up, `password` a reset; nil for the
    /// reset request form.
    static func linkPurpose(_ step: String) -> AccountLink.Purpose? {
        switch step {
        case "verify": .signup
        case "password": .reset
        default: nil
        }
    }

    private func submitLinkForm(_ context: RequestContext) throws -> HTTPResponse {
        let fields = FormBody.parse(context.request.body)
        guard let (app, csrf) = try checkForm(context, fields) else { return forbidden() }
        let step = String(context.request.head.path.dropFirst("/signin/".count))
        do {
            switch step {
            case "verify":
                _ = try services.accounts.followSignUpLink(fields["token"] ?? "")
                return page(SignInHTML.done("Your email is confirmed and your account is ready.", app: app), status: 200, origins: app.origins)
            case "password":
                _ = try services.accounts.followResetLink(fields["token"] ?? "", password: fields["password"])
                return page(SignInHTML.done("Your new password is set. Every other session was signed out.", app: app),
                            status: 200, origins: app.origins)
            default:
                try services.accounts.requestReset(email: fields["email"] ?? "", address: context.request.head.remoteAddress,
                                                   linkBase: context.mailLinkBaseURL.map { $0 + "/signin/password?" + app.query })
                return page(SignInHTML.checkEmail(app: app), status: 200, origins: app.origins)
            }
        } catch let error as CloudKitError where [.badRequest, .authenticationFailed, .throttled].contains(error.code) {
            let status = error.code == .badRequest ? 400 : error.code == .throttled ? 429 : AccountLinkRefusal.pageStatus(error, fallback: 403)
            return page(SignInHTML.linkForm(step: step, csrf: csrf, app: app, linkToken: fields["token"] ?? "", error: error.reason),
                        status: status, origins: app.origins)
        }
    }

    // MARK: Completion

    func complete(_ token: String, _ app: SignInApp) -> HTTPResponse {
        completion(token, errorMessage: nil, app)
    }

    /// Hands the outcome back: for a share page, a redirect back to it (with the session in the
    /// page's cookie when signed in; A47, C13); for an app, a redirect to its callback URL, or the page that posts
    /// to the opener (A8).
    func completion(_ token: String?, errorMessage: String?, _ app: SignInApp) -> HTTPResponse {
        if let path = app.returnPath {
            // The session goes into the share page's own cookie, never into its URL (C13).
            var response = HTTPResponse(status: 303, headers: [("location", path)], body: [])
            if let token, let guid = SignInApp.sharePageGUID(path) {
                response.headers.append(("set-cookie", ShareSession.setCookie(token, guid: guid, secure: services.publicURL?.hasPrefix("https://") ?? false)))
            }
            response.headers += Self.securityHeaders(origins: [])
            return response
        }
        if let callback = app.callback, let origin = Origins.origin(ofURL: callback), app.origins.contains(origin) {
            let separator = callback.contains("?") ? "&" : "?"
            let parameter = token.map { "ckWebAuthToken=" + SignInHTML.percent($0) }
                ?? "errorMessage=" + SignInHTML.percent(errorMessage ?? "Sign-in failed.")
            var response = HTTPResponse(status: 303, headers: [("location", callback + separator + parameter)], body: [])
            response.headers += Self.securityHeaders(origins: app.origins)
            return response
        }
        return page(SignInHTML.complete(session: token, errorMessage: errorMessage, origins: app.origins), status: 200, origins: app.origins)
    }

    // MARK: CSRF

    /// The form's app and a fresh CSRF field, or nil when the CSRF check fails.
    func checkForm(_ context: RequestContext, _ fields: [String: String]) throws -> (SignInApp, String)? {
        guard let csrf = self.csrf.check(context, fields) else { return nil }
        guard case .success(let app) = try self.app(fields) else { return nil }
        return (app, csrf)
    }

    func forbidden() -> HTTPResponse {
        page(SignInHTML.problem("This form expired or did not come from this site. Go back, reload the page and try again."), status: 403, origins: [])
    }

    /// The sign-in pages' CSRF mechanism (A9), scoped to `/signin`.
    var csrf: FormCSRF { FormCSRF(secret: services.secret, path: "/signin") }

    /// The request's CSRF cookie, or a new one with its Set-Cookie header.
    func csrfCookie(_ context: RequestContext) -> (String, String?) {
        let (value, setCookie) = csrf.cookie(context)
        return (value, setCookie)
    }

    func csrfToken(_ cookie: String) -> String {
        csrf.token(cookie)
    }

    static func cookies(_ header: String?) -> [String: String] {
        FormCSRF.cookies(header)
    }

    // MARK: Responses

    func page(_ html: String, status: Int, origins: [String]) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/html; charset=utf-8")] + Self.securityHeaders(origins: origins),
                     body: Array(html.utf8))
    }

    /// No inline script or style, no framing, no referrer (URLs may carry tokens), no caching;
    /// forms post to this server, or redirect to the app's own origins.
    static func securityHeaders(origins: [String]) -> [(String, String)] {
        let formAction = (["'self'"] + origins).joined(separator: " ")
        return [("content-security-policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action \(formAction); frame-ancestors 'none'; base-uri 'none'"),
                ("x-frame-options", "DENY"), ("referrer-policy", "no-referrer"), ("cache-control", "no-store"), ("x-content-type-options", "nosniff")]
    }
}

/// Why a sign-in page cannot be shown.
struct PageProblem: Error {
    var status: Int
    var message: String
}

/// `application/x-www-form-urlencoded` bodies (WHATWG URL: `+` is a space, then percent-decoding).
enum FormBody {
    static func parse(_ body: [UInt8]) -> [String: String] {
        var result: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            result[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
        }
        return result
    }
}

/// The consent step's proof that the password was checked: `user.container.expiry.mac`, where
/// the MAC is HMAC-SHA256 under the server secret.
enum Ticket {
    static func make(user: String, container: String, secret: [UInt8], expiresAt: Int64) -> String {
        let payload = "\(user)|\(container)|\(expiresAt)"
        return payload + "|" + Digest.hex(Digest.hmacSHA256(key: secret, message: Array(("consent|" + payload).utf8)))
    }

    /// The user the ticket was made for, when it is genuine, for `container` and not expired.
    static func check(_ ticket: String, container: String, secret: [UInt8], now: Int64) -> String? {
        let parts = ticket.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, parts[1] == container, let expiry = Int64(parts[2]), expiry > now else { return nil }
        let payload = parts[0...2].joined(separator: "|")
        let mac = Digest.hex(Digest.hmacSHA256(key: secret, message: Array(("consent|" + payload).utf8)))
        return Digest.equal(Array(mac.utf8), Array(parts[3].utf8)) ? parts[0] : nil
    }
}
