import TandemCore
import TandemHTTP
import TandemStore

/// Who is looking at a share page (decisions C12): the person's web auth token (A6) kept in the
/// cookie `tandem_share` (`HttpOnly; SameSite=Lax`, `Secure` over https), scoped to that one
/// page (`Path=/share/{shortGUID}`), so no script ever holds the token and no other page or
/// app receives it. The sign-in page sets it when it sends a person back to the share page
/// (A47, C13); the page's "Sign out" revokes the session and clears it.
///
/// `Lax` (not `Strict`) so that a share link opened from an email or a chat finds the person
/// signed in; every POST still needs the page's CSRF field (`FormCSRF`), and `Lax` cookies are
/// not sent on cross-site POSTs.
enum ShareSession {
    static let cookieName = "tandem_share"

    /// The cookie's path: exactly the share page and its forms.
    static func path(_ guid: String) -> String { "/share/" + guid }

    /// The `Set-Cookie` value that keeps `token` for the page of `guid`.
    static func setCookie(_ token: String, guid: String, secure: Bool) -> String {
        "\(cookieName)=\(token); Path=\(path(guid)); HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
    }

    /// The `Set-Cookie` value that forgets the page's session.
    static func clearCookie(guid: String, secure: Bool) -> String {
        "\(cookieName)=; Path=\(path(guid)); Max-Age=0; HttpOnly; SameSite=Lax\(secure ? "; Secure" : "")"
    }

    /// The token the request's cookie holds, if any.
    static func token(_ context: RequestContext) -> String? {
        let value = FormCSRF.cookies(context.request.head.headers["cookie"])[cookieName]
        return value?.isEmpty == false ? value : nil
    }

    /// The signed-in viewer of a share page in `container`: the account, the token, and the
    /// cookie to set when the session was rotated (A13). Nil when the request has no cookie or
    /// its token is refused (unknown, revoked, expired, or issued for another container), with
    /// the cookie to clear in that case.
    struct Viewer {
        var user: UserAccount
        var token: String
    }

    static func viewer(_ context: RequestContext, container: String, guid: String,
                       authenticator: Authenticator) -> (viewer: Viewer?, setCookie: String?) {
        guard let token = token(context), !container.isEmpty else { return (nil, nil) }
        let secure = context.baseURL.hasPrefix("https://")
        guard let (user, rotated) = try? authenticator.signedIn(token: token, container: container, rotating: true) else {
            return (nil, clearCookie(guid: guid, secure: secure))
        }
        if let rotated { return (Viewer(user: user, token: rotated), setCookie(rotated, guid: guid, secure: secure)) }
        return (Viewer(user: user, token: token), nil)
    }
}
