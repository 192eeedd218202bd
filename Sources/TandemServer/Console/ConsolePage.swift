import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The web console at `/console/` (issue 18; decisions C1–C11, C50–C59): everything for server
/// administrators; for any other account, only what that account may see (C50):
///
/// - `GET /` — leads to the console (`303` to `/console/`).
/// - `GET|POST /console/setup` — the first administrator, with the code `tandem serve` printed.
/// - `GET|POST /console/signin`, `POST /console/signout` — the console session (any account).
/// - `GET /console/`, `POST /console/containers`, `GET /console/containers/{id}`,
///   `POST /console/containers/{id}/tokens`, `…/tokens/revoke`, `…/keys/revoke` — containers,
///   API tokens and server-to-server keys (`ConsolePage+Containers.swift`; a new token's secret
///   is shown once, on the GET its POST redirects to, C52);
///   `GET /console/containers/{id}/shares/{environment}`; `GET|POST /console/shares/{shortGUID}…`,
///   a share's page acting for its owner (`ConsolePage+SharePage.swift`, C17);
///   `GET /console/containers/{id}/schema/{environment}`, `POST …/schema/development/edit`,
///   `GET|POST …/schema/development/ckdb`, `GET …/schema/diff`, `POST …/schema/deploy`
///   (`ConsolePage+Schema.swift`);
///   `GET /console/containers/{id}/data/{environment}`, `GET|POST …/data/{environment}/record`,
///   `POST …/record/delete` — the data browser (`ConsolePage+Data.swift`, `ConsolePage+Record.swift`).
///   `GET /console/containers/{id}/subscriptions/{environment}`, `POST …/delete`, `GET …/webhooks/{environment}`,
///   `GET …/connections/{environment}` — subscriptions and push (`ConsolePage+Push.swift`, C40–C43);
///   `GET /console/containers/{id}/sharedwithyou/{environment}`, `POST …/test` — apps, association
///   files, the link tester, conversation counts and live group sessions (`ConsolePage+SharedWithYou.swift`, C44, C45).
/// - `GET /console/account`, `POST /console/account/sessions/revoke` — the signed-in account's
///   own sessions and subscriptions (`ConsolePage+Account.swift`, C51).
/// - `GET /console/users`, `GET /console/users/{recordName}`, `POST …/sessions/revoke`,
///   `…/verify`, `GET|POST …/remove` — accounts (`ConsolePage+Users.swift`).
/// - `GET /console/logs`, `/console/logs.json`, `/console/metrics`, `/console/metrics.json` — the
///   live request log and charts (`ConsolePage+Monitoring.swift`).
/// - `GET /console/console.css`, `/console/console.js` — the only stylesheet and script.
///
/// Signed out, a page answers `303` to `/console/signin` (to `/console/setup` while there is no
/// administrator) and a JSON endpoint `401 AUTHENTICATION_REQUIRED`. An account that is not an
/// administrator gets `403 ACCESS_DENIED` from the administrators' pages (users, API tokens,
/// keys, containers' creation, schemas, the log and the charts), its own shares, records and
/// sessions only, and a data browser that acts only as itself (C50). A POST whose CSRF field does
/// not match its cookie gets `403` and changes nothing. Every action calls the function the
/// `tandem` CLI calls; the data browser calls the records services the HTTP API calls (C20).
struct ConsolePage: Sendable {
    let services: Services
    let log: RequestLog
    let monitor: ConsoleMonitor
    /// New API tokens' secrets waiting for the page their POST redirects to (C52).
    let flash = ConsoleFlash()

    /// The largest form body a console page takes (decisions C5).
    static let formBodyBytes = 64 * 1024

    var sessions: ConsoleSessions { ConsoleSessions(store: services.store) }
    var csrf: FormCSRF { FormCSRF(secret: services.secret, path: "/console") }

    /// One console request, once it is known who sent it.
    struct Visit {
        var context: RequestContext
        /// The signed-in account.
        var user: UserAccount
        /// Whether it is a server administrator now (C50).
        var isAdmin: Bool
        var tokenHash: [UInt8]
        /// The CSRF field for this visit's forms.
        var csrf: String
        /// A new CSRF cookie to set, if the browser had none.
        var setCookie: String?
        var fields: [String: String]

        /// The account's email, else its user record name, for pages and the log.
        var name: String { user.email ?? user.recordName }

        /// Refuses an account that is not a server administrator: the administrators' pages
        /// and actions (C50).
        func requireAdmin() throws {
            guard isAdmin else { throw CloudKitError(.accessDenied, "this page is for server administrators; \(name) is not one") }
        }
    }

    /// The response for a console path, or nil when the path is not the console's.
    func respond(_ context: RequestContext) throws -> HTTPResponse? {
        let head = context.request.head
        let path = head.path
        if path == "/" {
            guard head.method == "GET" || head.method == "HEAD" else { throw MethodNotAllowed(allowed: "GET") }
            return redirect("/console/")
        }
        guard path == "/console" || path.hasPrefix("/console/") else { return nil }
        switch (head.method, path) {
        case ("GET", "/console"):
            return redirect("/console/")
        case ("GET", "/console/console.css"), ("HEAD", "/console/console.css"):
            return asset(ConsoleAssets.stylesheet, type: "text/css")
        case ("GET", "/console/console.js"), ("HEAD", "/console/console.js"):
            return asset(ConsoleAssets.script, type: "text/javascript")
        case ("GET", "/console/setup"):
            return try showSetup(context, code: context.parameters["code"] ?? "", error: nil, status: 200)
        case ("POST", "/console/setup"):
            return try submitSetup(context)
        case ("GET", "/console/signin"):
            return try showSignIn(context, email: "", error: nil, status: 200)
        case ("POST", "/console/signin"):
            return try submitSignIn(context)
        case (_, "/console/setup"), (_, "/console/signin"):
            throw MethodNotAllowed(allowed: "GET, POST")
        default:
            break
        }
        let json = path.hasSuffix(".json")
        let visit: Visit
        switch try sessions.standing(context) {
        case .signedOut:
            if json { return Responses.error(CloudKitError(.authenticationRequired, "sign in to the console at /console/signin"), uuid: context.uuid) }
            return redirect(try ConsoleAdmin.exists(store: services.store) ? "/console/signin" : "/console/setup")
        case .signedIn(let user, let hash, let isAdmin):
            let (cookie, setCookie) = csrf.cookie(context)
            let fields = head.method == "POST" ? FormBody.parse(context.request.body) : context.parameters
            // The field fits this session only: a pair of cookie and field taken from another
            // visit (and the cookie planted by a sibling site) does not pass (C63).
            visit = Visit(context: context, user: user, isAdmin: isAdmin, tokenHash: hash, csrf: csrf.token(cookie, session: hash), setCookie: setCookie,
                          fields: fields)
            if head.method == "POST" && csrf.check(context, fields, session: hash) == nil { return forbidden() }
        }
        var response: HTTPResponse
        do {
            response = try route(visit)
        } catch let error as CloudKitError where !json {
            // A page's refusal is a page: the reason, and the request ID the log shows.
            let title = error.code == .notFound ? "Not found" : error.code == .accessDenied ? "Not allowed" : "That did not work"
            response = page(ConsoleHTML.page(title: title, csrf: visit.csrf, admin: visit.isAdmin, body: """
                <p id="problem" role="alert">\(ConsoleHTML.escape(error.reason))</p>
                <p class="hint">Request ID <code>\(context.uuid)</code>. <a href="/console/">Back to the console</a></p>
                """), status: error.code.httpStatus)
        }
        if let setCookie = visit.setCookie { response.headers.append(("set-cookie", setCookie)) }
        return response
    }

    private func route(_ visit: Visit) throws -> HTTPResponse {
        let head = visit.context.request.head
        let segments = head.path.split(separator: "/", omittingEmptySubsequences: true).dropFirst().map(String.init)
        switch (head.method, segments.first) {
        case ("POST", "signout"?) where segments.count == 1:
            let clear = try sessions.signOut(tokenHash: visit.tokenHash, secure: visit.context.baseURL.hasPrefix("https://"))
            var response = redirect("/console/signin?done=signed-out")
            response.headers.append(("set-cookie", clear))
            return response
        case (_, nil), (_, "containers"?):
            return try containers(visit, segments: Array(segments.dropFirst()))
        case (_, "account"?):
            return try account(visit, segments: Array(segments.dropFirst()))
        case (_, "users"?):
            try visit.requireAdmin()
            return try users(visit, segments: Array(segments.dropFirst()))
        case (_, "shares"?):
            return try sharePage(visit, segments: Array(segments.dropFirst()))
        case (_, "logs"?), (_, "logs.json"?), (_, "metrics"?), (_, "metrics.json"?):
            try visit.requireAdmin()
            return try monitoring(visit, segments: segments)
        default:
            throw CloudKitError(.notFound, "no console page at \(head.path)")
        }
    }

    // MARK: Responses

    /// The console's Content-Security-Policy: nothing inline, nothing from elsewhere (C4).
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    static let securityHeaders: [(String, String)] = [
        ("content-security-policy", contentSecurityPolicy), ("x-frame-options", "DENY"), ("referrer-policy", "same-origin"),
        ("cache-control", "no-store"), ("x-content-type-options", "nosniff"),
    ]

    func page(_ html: String, status: Int) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("content-type", "text/html; charset=utf-8")] + Self.securityHeaders, body: Array(html.utf8))
    }

    func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("location", location)] + Self.securityHeaders, body: [])
    }

    func json(_ value: JSONValue) -> HTTPResponse {
        var response = Responses.json(value)
        response.headers += Self.securityHeaders
        return response
    }

    func forbidden() -> HTTPResponse {
        page(ConsoleHTML.page(title: "Form expired", csrf: nil, body: """
            <p id="csrf-refused">This form expired or did not come from this site. Go back, reload the page and try again.</p>
            """), status: 403)
    }

    private func asset(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("content-type", type + "; charset=utf-8"), ("cache-control", "public, max-age=300"),
                                            ("x-content-type-options", "nosniff")], body: Array(text.utf8))
    }
}
