import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// The page of an activity invitation, `GET /activity/{token}` (decisions R22): what a browser
/// shows when the link is opened outside the app. It shows the same to everyone, since it cannot
/// tell a member from anyone else who holds the link: the join code and the link to open in the
/// app, and the activity's `fallbackURL` ("Continue on the web"), which is what SharePlay shows
/// people who cannot take part. Never the title, the conversation or who made it. An unknown,
/// expired or revoked invitation is a 404 page saying it is not available.
///
/// The link is also drawn as a QR code (inline SVG from libqrencode, `QRCodeSVG`; R38), so a
/// phone's camera opens it from another screen, SharePlay-over-AirDrop's role. The page has no form (nothing to protect with a CSRF
/// field) and carries the share page's headers: no script of its own, no framing, no referrer.
struct ActivityInvitationPage: Sendable {
    let services: Services

    func respond(_ context: RequestContext, token: String) throws -> HTTPResponse {
        let invitation = token.hasPrefix(ActivityInvitations.tokenPrefix) && token.utf8.count <= 64
            ? try services.store.read { try $0.activityInvitation(hash: Tokens.hash(token)) } : nil
        let now = Clock.milliseconds()
        guard let invitation, invitation.revokedAt == nil, invitation.expiresAt > now,
              let activity = try? SessionActivity.parse(try JSONParser.parse(invitation.activity)) else {
            return Self.html(status: 404, title: "Invitation not available",
                             body: "<p id=\"problem\">This activity invitation is not available: it expired, was revoked, or never existed.</p>")
        }
        let url = context.baseURL + ActivityInvitations.pagePrefix + token
        let code = ActivityInvitations.displayCode(services.activityInvitations.code(for: token))
        var body = "<p>Open this link in the app to join the activity. People in the conversation it was made for join its session.</p>"
            + "<p>Join code: <strong id=\"code\">\(SharePageHTML.escape(code))</strong></p>"
            + "<p>Link: <code id=\"url\">\(SharePageHTML.escape(url))</code></p>"
            + (QRCodeSVG.svg(for: url, label: "QR code of the invitation link").map { "<p>\($0)</p>" } ?? "")
        if let fallback = activity.metadata["fallbackURL"]?.stringValue {
            body += "<p><a id=\"fallback\" href=\"\(SharePageHTML.escape(fallback))\" rel=\"noopener noreferrer\">Continue on the web</a></p>"
        }
        return Self.html(status: 200, title: "Activity invitation", body: body)
    }

    static func html(status: Int, title: String, body: String) -> HTTPResponse {
        let html = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
            + "<meta name=\"robots\" content=\"noindex\"><title>\(title)</title><link rel=\"stylesheet\" href=\"/share/share.css\"></head>"
            + "<body><main id=\"main\"><h1>\(title)</h1>\(body)</main></body></html>"
        return HTTPResponse(status: status, headers: [("content-type", "text/html; charset=utf-8")] + SharePage.securityHeaders, body: Array(html.utf8))
    }
}
