import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The share page's "Sign in" (A47, C13; QA: a signed-out visitor of a private share had no way
/// to sign in): the sign-in page with `return=/share/{shortGUID}` sends the person back to that
/// page with their session in the page's cookie, never anywhere else, over plain HTTP as a
/// browser does it.
@Suite struct SharePageSignInTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    /// The sign-in form of a page: its CSRF cookie and field.
    struct Form {
        var cookie: String
        var csrf: String

        init(_ page: TestServer.Response) throws {
            guard let cookie = page.headers["set-cookie"]?.split(separator: ";").first.map(String.init),
                  let csrf = page.text.range(of: #"name="csrf" value=""#).map({ String(page.text[$0.upperBound...].prefix(64)) }) else {
                throw TestFailure("no form on the page: \(page.text)")
            }
            self.cookie = cookie
            self.csrf = csrf
        }

        /// POSTs the fields to `path` without following a redirect.
        func post(_ server: TestServer, _ path: String, _ fields: [String: String]) throws -> RawSocket.Reply {
            var all = fields
            all["csrf"] = csrf
            let body = all.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
            let socket = try RawSocket(port: server.port)
            socket.send("POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nCookie: \(cookie)\r\nConnection: close\r\n"
                        + "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            return socket.readUntilClosed(seconds: 20)
        }
    }

    static func signInLink(_ page: String) -> String? {
        guard let range = page.range(of: #"<a id="signin" href=""#) else { return nil }
        return String(page[range.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
    }

    @Test func aSignedOutInviteeSignsInFromTheSharePageAndComesBackToAccept() throws {
        let (server, app) = try Self.lazy.get()
        let owner = try server.person("owner")
        let email = "\(unique("invitee"))@example.com".lowercased()
        let invitee = try server.signUpVerified(email, password: "invitee password", apiToken: app)
        let note = try server.shareNote(owner: owner, participants: [Invite.address(email)])

        let share = try server.request("GET", server.baseURL + "/share/" + note.guid, token: .some(nil))
        #expect(share.status == 200 && share.text.contains("This item is private"), "\(share.text)")
        let link = try #require(Self.signInLink(share.text), "\(share.text)")
        #expect(link == "/signin?return=%2Fshare%2F\(note.guid)")

        let signIn = try server.request("GET", server.baseURL + link, token: .some(nil))
        #expect(signIn.status == 200 && signIn.text.contains(#"name="return" value="/share/\#(note.guid)""#), "\(signIn.text)")
        #expect(signIn.headers["content-security-policy"]?.contains("form-action 'self'") == true, "\(signIn.headers)")
        #expect(!signIn.text.contains(TestServer.container), "the page does not name the share's app (D7)")
        let form = try Form(signIn)
        let wrong = try form.post(server, "/signin", ["return": "/share/" + note.guid, "email": email, "password": "not the password"])
        #expect(wrong.status == 401 && wrong.header("location") == nil, "\(wrong.text)")
        let done = try form.post(server, "/signin", ["return": "/share/" + note.guid, "email": email, "password": "invitee password"])
        #expect(done.status == 303, "\(done.text)")
        #expect(done.header("location") == "/share/\(note.guid)", "the session never travels in the URL (C13)")
        let cookie = try #require(SharePageVisit.setCookies(done).first { $0.hasPrefix("tandem_share=") }, "\(done.text)")
        #expect(cookie.contains("; Path=/share/\(note.guid);") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "\(cookie)")
        let token = String(cookie.dropFirst("tandem_share=".count).prefix { $0 != ";" })
        #expect(try server.currentUser(token) == invitee)
        #expect(try server.sqlite("SELECT count(*) FROM container_consents WHERE user_record_name = '\(invitee)'") == "0",
                "no app got the token, so no consent was asked or recorded")

        // Back on the share page with the cookie, signed in: the invitation is accepted with the
        // page's form; the page sends no referrer.
        var page = SharePageVisit(server: server, guid: note.guid, token: token)
        let back = try page.open()
        #expect(back.status == 200 && back.body.contains(#"id="accept""#) && Self.signInLink(back.body) == nil, "\(back.text)")
        #expect(!back.body.contains(token) && !back.body.contains("localStorage"), "the page never holds the token")
        #expect(back.header("referrer-policy") == "no-referrer", "\(back.text)")
        #expect(SharePageVisit.outcome(try page.post("accept", [:])) == "ok")
        let resolved = try server.post("records/resolve", ["shortGUIDs": [["value": .string(note.guid)]]], token: .some(token), database: "public")
        #expect(resolved.json["results"]?.arrayValue?.first?["participantStatus"] == "ACCEPTED", "\(resolved.text)")
    }

    /// Only this server's share pages are returned to: any other value is refused before a
    /// form is shown, and a form posted with another value is refused too (no open redirect).
    @Test(arguments: ["https://evil.example/", "//evil.example/share/aaaaaaaaaaaaaaaaaaaaaaaaaa", "/\\evil.example", "http:/evil.example",
                      "/share/aaaaaaaaaaaaaaaaaaaaaaaaaa/../../signin", "/share/../signin", "/share/aaaaaaaaaaaaaaaaaaaaaaaaaa?x=1",
                      "/share/aaaaaaaaaaaaaaaaaaaaaaaaaa#x", "/share/AAAAAAAAAAAAAAAAAAAAAAAAAA", "javascript:alert(1)", "/signin", ""])
    func aReturnOutsideTheSharePagesIsRefused(target: String) throws {
        let (server, _) = try Self.lazy.get()
        let url = server.baseURL + "/signin?return=" + (target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let page = try server.request("GET", url, token: .some(nil))
        #expect(page.status == 400 && !page.text.contains("<form"), "\(target): \(page.status) \(page.text)")

        let good = try Form(try server.request("GET", server.baseURL + "/signin?return=%2Fshare%2Faaaaaaaaaaaaaaaaaaaaaaaaaa", token: .some(nil)))
        let posted = try good.post(server, "/signin", ["return": target, "email": "x@example.com", "password": "whatever it is"])
        #expect(posted.status == 403 && posted.header("location") == nil, "\(target): \(posted.text)")
    }

    /// A share URL that names no share gets the same page and form as a private one (D7); after
    /// the sign-in the person is back on that page, with no session (there is no app to sign in to).
    @Test func aShareURLThatNamesNoShareSignsInAndReturnsWithoutASession() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("wanderer"))@example.com".lowercased()
        try server.signUpVerified(email, password: "wanderer password", apiToken: app)
        let guid = String(repeating: "b", count: 26)
        let share = try server.request("GET", server.baseURL + "/share/" + guid, token: .some(nil))
        let link = try #require(Self.signInLink(share.text), "\(share.text)")
        let form = try Form(try server.request("GET", server.baseURL + link, token: .some(nil)))
        let done = try form.post(server, "/signin", ["return": "/share/" + guid, "email": email, "password": "wanderer password"])
        #expect(done.status == 303 && done.header("location") == "/share/" + guid, "\(done.text)")
        #expect(!SharePageVisit.setCookies(done).contains { $0.hasPrefix("tandem_share=") }, "no session for a URL that names no share")
    }
}
