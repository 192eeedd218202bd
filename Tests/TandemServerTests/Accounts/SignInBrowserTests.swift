import Foundation
import Testing
import TandemCore

/// The web sign-in page (`/signin`): over plain HTTP (CSRF, headers, the redirect URL that
/// points to it), and CloudKit JS's popup and redirect flows in headless Chromium
/// (Tests/Browser/signin_flow.py; `scripts/bootstrap --test` installs Chromium).
@Suite struct SignInBrowserTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/signin_flow.py").path
    }

    @Test(.timeLimit(.minutes(5)))
    func cloudKitJSFlowPostsOnlyToAllowedOriginsInHeadlessChromium() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("popup"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "popup password", apiToken: app)
        let run = try LandingPageBrowserTests.python([
            Self.driver, "--server", server.baseURL, "--container", TestServer.container, "--email", email, "--password", "popup password",
            "--user", user, "--tandem", TestServer.binary, "--data", server.dataDirectory,
        ], timeout: 240)
        #expect(run.status == 0, "signin_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
    }

    @Test func authenticationRequiredPointsToTheSignInPageWithTheAppsAPIToken() throws {
        let (server, _) = try Self.lazy.get()
        let app = try server.apiToken(origins: ["https://app.example"])
        let encoded = app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = try server.request("GET", server.databaseURL("users/current", database: "public") + "?ckAPIToken=" + encoded, token: .some(nil))
        #expect(response.json.serverErrorCode == "AUTHENTICATION_REQUIRED")
        let redirect = try #require(response.json["redirectURL"]?.stringValue)
        #expect(redirect == server.baseURL + "/signin?ckAPIToken=" + encoded)
        let page = try server.request("GET", redirect, token: .some(nil))
        #expect(page.status == 200 && page.text.contains("<form method=\"post\" action=\"/signin\""), "\(page.status) \(page.text)")
        #expect(page.headers["set-cookie"]?.contains("SameSite=Strict") == true)
    }

    @Test func formsWithoutAMatchingCSRFTokenAreRefusedAndChangeNothing() throws {
        let (server, _) = try Self.lazy.get()
        let app = try server.apiToken(origins: ["https://app.example"])
        let email = "\(unique("csrf"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "csrf password", apiToken: app)
        let page = try server.request("GET", server.baseURL + "/signin?ckAPIToken=" + app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                      token: .some(nil))
        let cookie = try #require(page.headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        let field = try #require(page.text.range(of: #"name="csrf" value=""#).map { String(page.text[$0.upperBound...].prefix(64)) })
        func post(cookie: String?, csrf: String?) throws -> TestServer.Response {
            var form = "ckAPIToken=\(app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&email=\(email)&password=csrf+password"
            if let csrf { form += "&csrf=" + csrf }
            var headers = ["Content-Type": "application/x-www-form-urlencoded"]
            if let cookie { headers["Cookie"] = cookie }
            return try server.request("POST", server.baseURL + "/signin", body: Data(form.utf8), token: .some(nil), headers: headers)
        }
        // This account's tokens only: the suite's other tests sign in on the same server at the same time.
        let tokens = "SELECT count(*) FROM tokens WHERE user_record_name = '\(user)'"
        let before = try server.sqlite(tokens)
        for (label, response) in [("no cookie", try post(cookie: nil, csrf: field)), ("no field", try post(cookie: cookie, csrf: nil)),
                                  ("wrong field", try post(cookie: cookie, csrf: String(repeating: "0", count: 64))),
                                  ("another cookie", try post(cookie: "tandem_csrf=" + String(repeating: "A", count: 43), csrf: field))] {
            #expect(response.status == 403, "\(label): \(response.status)")
        }
        #expect(try server.sqlite(tokens) == before)
        // With both, the password is checked (consent is the next step).
        let good = try post(cookie: cookie, csrf: field)
        #expect(good.status == 200 && good.text.contains("id=\"allow\""), "\(good.status) \(good.text)")
    }

    @Test func anAPITokenWithoutOriginsOrAnUnknownOneGetsNoSignInForm() throws {
        let (server, app) = try Self.lazy.get()   // `app` has no origins
        for token in [app, "tdk_unknown", ""] {
            let page = try server.request("GET", server.baseURL + "/signin?ckAPIToken=" + token, token: .some(nil))
            #expect(page.status == 400 && !page.text.contains("<form"), "\(token): \(page.status)")
        }
        #expect(throws: (any Error).self) { try server.apiToken(origins: ["https://app.example/path"]) }
        #expect(throws: (any Error).self) { try server.apiToken(origins: ["https://app.example"], callback: "https://evil.example/cb") }
    }

    @Test func thePageReportsWrongPasswordsThrottlingAndADeclinedConsent() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "2,10,60"])
        let app = try server.apiToken(origins: ["https://app.example"])
        let email = "\(unique("page"))@example.com".lowercased()
        try server.signUpVerified(email, password: "page password", apiToken: app)
        let page = try server.request("GET", server.baseURL + "/signin?ckAPIToken=" + app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                      token: .some(nil))
        let form = try FormPage(page)
        // Declining consent completes the flow with {errorMessage}, and issues nothing.
        let asked = try form.post(server, "/signin", ["email": email, "password": "page password"])
        let ticket = try #require(asked.text.range(of: #"name="ticket" value=""#).map { String(asked.text[$0.upperBound...].prefix { $0 != "\"" }) })
        let declined = try form.post(server, "/signin/consent", ["ticket": ticket.replacingOccurrences(of: "&#39;", with: "'"), "decision": "deny"])
        #expect(declined.status == 200 && declined.text.contains("data-error=\"The user did not allow") && !declined.text.contains("data-session"),
                "\(declined.text)")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE container_id = '\(TestServer.container)' AND kind = 'user'") == "0")
        // A forged ticket is refused.
        let forged = try form.post(server, "/signin/consent", ["ticket": "_someone|\(TestServer.container)|99999999999999|00", "decision": "allow"])
        #expect(forged.status == 403)
        // Wrong passwords are shown on the form; past the limit the page says when to retry.
        for _ in 0..<2 {
            let wrong = try form.post(server, "/signin", ["email": email, "password": "not it"])
            #expect(wrong.status == 401 && wrong.text.contains("The email or password is wrong."), "\(wrong.status)")
        }
        let throttled = try form.post(server, "/signin", ["email": email, "password": "page password"])
        #expect(throttled.status == 429 && throttled.text.contains("Too many attempts") && throttled.headers["retry-after"] != nil,
                "\(throttled.status) \(throttled.headers)")
    }
}
