import TandemCore
import TandemStore

/// Whom a sign-in page works for, and where the finished sign-in's web auth token goes
/// (decisions A8, A47). Every form and link of the flow carries the same key (`field`, `query`),
/// so each step finds it again.
///
/// - An app, named by its API token (`ckAPIToken`): the token is posted to the app's allowed
///   origins, or the browser is sent to its callback URL (A8). A first sign-in asks consent (A10).
/// - A share page of this server (`return=/share/{shortGUID}`), for a person who opened a share
///   URL signed out: the browser is sent back to that page with the session in the page's own
///   cookie (`ShareSession`, C13). Only a share page's path is accepted, so the page is
///   no open redirect; no consent is asked or recorded (the token goes to this server's own
///   page, not to an app); providers (A23) are not offered.
struct SignInApp: Sendable {
    /// The API token, for an app; nil for a share page.
    var apiToken: String?
    /// The container whose session the sign-in issues: the app's, or the share's ("" for a share
    /// URL that names no share: the person signs in and is returned without a session, as the
    /// page for a private share and for none look the same; D7).
    var container: String
    /// The origins the token may be posted to or redirected to (none for a share page).
    var origins: [String]
    /// The app's callback URL (redirect mode), when it has one.
    var callback: String?
    /// The share page to return to, for a share page's sign-in.
    var returnPath: String?

    /// The form field and query parameter naming this app: `ckAPIToken` or `return`.
    var key: (name: String, value: String) {
        if let apiToken { return ("ckAPIToken", apiToken) }
        return ("return", returnPath ?? "")
    }

    /// The key as a hidden form field.
    var field: String { SignInHTML.hidden(key.name, key.value) }

    /// The key as a query parameter (`name=value`, percent-encoded; HTML-escape it in markup).
    var query: String { key.name + "=" + SignInHTML.percent(key.value) }

    /// What the pages call the app: its container, or for a share page "a shared item".
    var name: String { apiToken == nil ? "a shared item" : container }

    /// Whether a first sign-in to the container asks the person's consent (apps only).
    var asksConsent: Bool { apiToken != nil }

    /// The app the page's query or form fields name (`ckAPIToken`, else `return`), or the
    /// problem to show.
    static func resolve(_ fields: [String: String], store: any Store) throws -> Result<SignInApp, PageProblem> {
        if let apiToken = fields["ckAPIToken"], !apiToken.isEmpty {
            guard let grant = try store.read({ try $0.grant(forTokenHash: Tokens.hash(apiToken)) }), grant.kind == .api,
                  grant.session.revokedAt == nil, let container = grant.container else {
                return .failure(PageProblem(status: 400, message: "Open this page from the app you want to sign in to (it needs the app's ckAPIToken)."))
            }
            if grant.callback == nil && grant.origins.isEmpty {
                return .failure(PageProblem(status: 400, message: "This app has no allowed origin, so it cannot receive a sign-in. Its operator adds one with: tandem token create --api --container \(container) --origin https://app.example"))
            }
            return .success(SignInApp(apiToken: apiToken, container: container, origins: grant.origins, callback: grant.callback))
        }
        if let path = fields["return"] {
            guard let guid = sharePageGUID(path) else {
                return .failure(PageProblem(status: 400, message: "This sign-in can only return to a share page of this server (/share/…)."))
            }
            let container = try store.read { try $0.share(shortGUID: guid) }?.container ?? ""
            return .success(SignInApp(apiToken: nil, container: container, origins: [], callback: nil, returnPath: "/share/" + guid))
        }
        return .failure(PageProblem(status: 400, message: "Open this page from the app you want to sign in to (it needs the app's ckAPIToken)."))
    }

    /// The share URL token of `path` when it is exactly `/share/{shortGUID}` (a path on this
    /// server, nothing before or after it), else nil.
    static func sharePageGUID(_ path: String) -> String? {
        guard path.hasPrefix("/share/") else { return nil }
        let guid = String(path.dropFirst("/share/".count))
        return ShareTokens.isWellFormed(guid) ? guid : nil
    }
}
