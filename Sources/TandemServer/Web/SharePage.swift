import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The share page `/share/{shortGUID}` for people (iCloud's share page and
/// UICloudSharingController's role; issue 18, decisions C12–C16):
///
/// - `GET /share/{shortGUID}` — the share as the viewer may see it, with Open Graph tags; the
///   owner and administrators manage it, participants leave, invitees accept or decline,
///   strangers join a public share or ask for access, or read "not available". Signed out:
///   a "Sign in" link to `/signin?return=/share/{shortGUID}` (A47), which comes back here with
///   the session in the page's cookie (`ShareSession`).
/// - `POST /share/{shortGUID}/{action}` — the forms (`SharePage+Actions.swift`): `accept`,
///   `decline`, `request`, `leave`, `invite`, `participant`, `remove`, `public-link`, `approve`,
///   `deny`, `stop`, `signout`. Each calls the service the JSON API calls (records/modify of
///   the share record, `ShareService`), so the rules and their errors are the API's.
/// - `GET /share/share.css`, `/share/share.js` — the only stylesheet and script.
///
/// A POST is read (at most `formBodyBytes`, under the anonymous body budget, C16), then the
/// session is checked (signed out: `303` to the sign-in page that returns here), then the CSRF
/// field (`403`, nothing changes), then the action. Success answers `303` back to the page with
/// `?done={action}`; a refusal shows the page again with the reason beside the form and the
/// service's HTTP status.
struct SharePage: Sendable {
    let services: Services

    /// The largest form body the page takes (C16): its forms hold a few short fields.
    static let formBodyBytes = 16 * 1024
    static let prefix = "/share/"

    var csrf: FormCSRF { FormCSRF(secret: services.secret, path: "/share") }

    /// A share, as the store found it by its URL token.
    typealias Found = (share: StoredShare, container: String, environment: Environment)

    /// One request to a share page, once its share and viewer are known.
    struct Visit {
        var context: RequestContext
        var guid: String
        var found: Found?
        var viewer: ShareSession.Viewer?
        /// Cookies to set on the answer (CSRF, rotated or cleared session).
        var setCookies: [String] = []
        var csrf: String?
    }

    func respond(_ context: RequestContext, guid: String, action: String?) throws -> HTTPResponse {
        let method = context.request.head.method
        let found: Found? = ShareTokens.isWellFormed(guid) ? try services.store.read { try $0.share(shortGUID: guid) } : nil
        var visit = Visit(context: context, guid: guid, found: found)
        let (viewer, sessionCookie) = ShareSession.viewer(context, container: found?.container ?? "", guid: guid,
                                                          authenticator: services.authenticator)
        visit.viewer = viewer
        if let sessionCookie { visit.setCookies.append(sessionCookie) }
        if viewer != nil {
            let (cookie, setCookie) = csrf.cookie(context)
            visit.csrf = csrf.token(cookie)
            if let setCookie { visit.setCookies.append(setCookie) }
        }
        guard let action else {
            guard method == "GET" || method == "HEAD" else { throw MethodNotAllowed(allowed: "GET") }
            let done = context.parameters["done"].flatMap { Self.doneMessages[$0] }
            return try page(visit, notice: done, problem: nil, status: 200)
        }
        guard method == "POST" else { throw MethodNotAllowed(allowed: "POST") }
        guard Self.actions.contains(action) else { throw CloudKitError(.notFound, "no page at \(context.request.head.path)") }
        guard let viewer = visit.viewer, let found = visit.found else {
            return finish(redirect(signInURL(guid)), visit)
        }
        let fields = FormBody.parse(context.request.body)
        guard csrf.check(context, fields) != nil else { return finish(forbidden(), visit) }
        do {
            return finish(try perform(action, fields: fields, viewer: viewer, found: found, visit: &visit, base: "/share/\(guid)"), visit)
        } catch let error as CloudKitError {
            return try refused(visit, action: action, fields: fields, field: nil, error)
        } catch let problem as FieldProblem {
            return try refused(visit, action: action, fields: fields, field: problem.field, problem.error)
        }
    }

    /// The page again, with the reason beside the form (and field) it concerns, and the
    /// service's HTTP status.
    private func refused(_ visit: Visit, action: String, fields: [String: String], field: String?, _ error: CloudKitError) throws -> HTTPResponse {
        try page(visit, notice: nil, problem: Self.problem(action: action, fields: fields, field: field, error), status: error.code.httpStatus)
    }

    /// The problem to show for a refused form.
    static func problem(action: String, fields: [String: String], field: String?, _ error: CloudKitError) -> SharePageHTML.Problem {
        SharePageHTML.Problem(form: fields["form"].flatMap(Self.formID) ?? action, field: field, message: Self.message(error),
                              code: error.code.rawValue, values: fields.filter { $0.key != "csrf" })
    }

    /// The forms an owner's page has, which a console administrator may send for the owner (C17).
    static let ownerActions: Set<String> = ["invite", "participant", "remove", "public-link", "approve", "deny", "stop"]

    /// The page's forms (`/share/{shortGUID}/{action}`).
    static let actions: Set<String> = ["accept", "decline", "request", "leave", "invite", "participant", "remove", "public-link",
                                       "approve", "deny", "stop", "signout"]

    /// What `?done=` says after an action.
    static let doneMessages = [
        "accept": "Accepted. Open the app to see it.", "decline": "You declined the invitation.",
        "request": "Request sent. The owner will decide.", "leave": "You left. You no longer have access.",
        "invite": "Invitation sent.", "participant": "Changed.", "remove": "Removed.", "public-link": "Link settings saved.",
        "approve": "Approved. They are invited.", "deny": "Request denied.", "stop": "Sharing stopped.", "signout": "You signed out.",
    ]

    /// A form id the page itself made (`p-3`, `approve-0`, …), or nil for anything else.
    static func formID(_ text: String) -> String? {
        text.count <= 32 && text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) ? text : nil
    }

    /// The reason as a person reads it: the service's reason, which names the rule.
    static func message(_ error: CloudKitError) -> String {
        switch error.code {
        case .conflict: "This share changed while you were looking at it. Reload the page and try again."
        // As the JSON API hides them (D7), and without naming the owner's zone.
        case .notFound where error.reason == AccessPolicy.hiddenReason, .zoneNotFound: "This item is not available to you."
        default: error.reason.prefix(1).uppercased() + error.reason.dropFirst() + (error.reason.hasSuffix(".") ? "" : ".")
        }
    }

    // MARK: Responses

    func signInURL(_ guid: String) -> String { "/signin?return=" + SignInHTML.percent("/share/" + guid) }

    private func page(_ visit: Visit, notice: String?, problem: SharePageHTML.Problem?, status: Int) throws -> HTTPResponse {
        var html = try html(visit.found?.share, guid: visit.guid, viewer: visit.viewer?.user, baseURL: visit.context.baseURL, csrf: visit.csrf)
        // Offered for every well-formed token, so a private share's page and a page for no share stay alike (D7).
        if visit.viewer == nil && ShareTokens.isWellFormed(visit.guid) { html.signInURL = signInURL(visit.guid) }
        html.notice = notice
        html.problem = problem
        return finish(HTTPResponse(status: status, headers: [("content-type", "text/html; charset=utf-8")] + Self.securityHeaders,
                                   body: Array(html.render().utf8)), visit)
    }

    /// The page of `share` as `viewer` sees it (also the console's, C17).
    func html(_ share: StoredShare?, guid: String, viewer: UserAccount?, baseURL: String, csrf: String?) throws -> SharePageHTML {
        let view = try services.store.read { try SharePageView.read($0, share, viewer: viewer) }
        let requested = guid.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return SharePageHTML(view: view, guid: guid, pageURL: baseURL + "/share/" + requested, csrf: csrf)
    }

    private func finish(_ response: HTTPResponse, _ visit: Visit) -> HTTPResponse {
        var response = response
        for cookie in visit.setCookies { response.headers.append(("set-cookie", cookie)) }
        return response
    }

    func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 303, headers: [("location", location)] + Self.securityHeaders, body: [])
    }

    private func forbidden() -> HTTPResponse {
        let html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Form expired</title><link rel=\"stylesheet\" href=\"/share/share.css\"></head>"
            + "<body><main id=\"main\"><h1>Form expired</h1><p id=\"problem\" role=\"alert\">This form expired or did not come from this site. Go back, reload the page and try again.</p></main></body></html>"
        return HTTPResponse(status: 403, headers: [("content-type", "text/html; charset=utf-8")] + Self.securityHeaders, body: Array(html.utf8))
    }

    static func asset(_ text: String, type: String) -> HTTPResponse {
        HTTPResponse(status: 200, headers: [("content-type", type + "; charset=utf-8"), ("cache-control", "public, max-age=300"),
                                            ("x-content-type-options", "nosniff")], body: Array(text.utf8))
    }

    /// No inline script or style, no framing, no referrer (the page's URL is a capability), no
    /// caching; forms post only to this server (C12).
    static let securityHeaders: [(String, String)] = [
        ("content-security-policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("x-frame-options", "DENY"), ("referrer-policy", "no-referrer"), ("cache-control", "no-store"), ("x-content-type-options", "nosniff"),
    ]
}
