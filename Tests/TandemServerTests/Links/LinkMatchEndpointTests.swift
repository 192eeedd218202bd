import Foundation
import Testing
import TandemCore

/// `GET /tandem/1/{container}/{env}/links/match` and the administrator's `links/upload` over
/// HTTP against a real server.
@Suite struct LinkMatchEndpointTests {
    /// Uploads `components` as the file of `domain` through the admin endpoint.
    /// Uploads as the operator: `apiToken` is the admin token (`tandem token create --admin`),
    /// nil sends the test user's token instead.
    func upload(_ domain: String, _ body: String, apiToken: String?) throws -> TestServer.Response {
        let server = try LinksServer.shared.server
        let url = "\(server.baseURL)/tandem/1/\(TestServer.container)/development/links/upload?domain=\(domain)"
        return try server.request("POST", url, body: Data(body.utf8), token: apiToken.map { .some($0) } ?? .none)
    }

    @Test func exactHostIsConsultedBeforeTheWildcard() throws {
        let (app, domain) = LinksServer.names()
        let api = try LinksServer.shared.apiToken
        #expect(try LinksServer.tandem(["app", "add", app, "--container", TestServer.container,
                                        "--domains", "applinks:*.\(domain),applinks:www.\(domain)"]).status == 0)
        // The parent's file (used for the wildcard) blocks /both/*; the exact host's opens it.
        #expect(try upload(domain, LinksServer.file(app, #"[{"/": "/both/*", "exclude": true}, {"/": "/wild/*"}]"#), apiToken: api).status == 200)
        #expect(try upload("www.\(domain)", LinksServer.file(app, #"[{"/": "/exact/*"}, {"/": "/both/*"}]"#), apiToken: api).status == 200)

        let both = try LinksServer.match("https://www.\(domain)/both/1", app: app)
        #expect(both.decision == "open")
        #expect(both.fileDomain == "www.\(domain)")
        #expect(both.json["entitlement"]?.stringValue == "applinks:www.\(domain)")
        // The exact host's file has no rule for /wild/*: the wildcard's file decides.
        let wild = try LinksServer.match("https://www.\(domain)/wild/1", app: app)
        #expect(wild.decision == "open")
        #expect(wild.fileDomain == domain)
        #expect(wild.json["entitlement"]?.stringValue == "applinks:*.\(domain)")
        // Other subdomains have only the wildcard.
        #expect(try LinksServer.match("https://shop.\(domain)/both/1", app: app).decision == "blocked")
        #expect(try LinksServer.match("https://a.b.\(domain)/exact/1", app: app).decision == "noMatch")
        // `*.example.com` does not cover `example.com` itself.
        let bare = try LinksServer.match("https://\(domain)/wild/1", app: app)
        #expect(bare.decision == "noMatch")
        #expect(bare.json["reason"]?.stringValue?.contains("no associated domain covering") == true)
    }

    @Test func uploadEndpointNeedsTheContainersAPIToken() throws {
        let (app, domain) = LinksServer.names()
        // A signed-in user is not the operator.
        let refused = try upload(domain, LinksServer.file(app, #"[{"/": "*"}]"#), apiToken: nil)
        #expect(refused.status == 401)
        #expect(refused.json.serverErrorCode == "AUTHENTICATION_FAILED")
        let bad = try upload(domain, "{\"applinks\": {\"details\": [}", apiToken: try LinksServer.shared.apiToken)
        #expect(bad.status == 400)
        #expect(bad.json["reason"]?.stringValue?.contains("line 1, column") == true, "\(bad.json)")
        let stored = try upload(domain, LinksServer.file(app, #"[{"/": "*"}]"#), apiToken: try LinksServer.shared.apiToken)
        #expect(stored.status == 200)
        #expect(stored.json["source"]?.stringValue == "upload")
        #expect(stored.json["version"] == .int(1))
    }

    @Test func uploadReplacesTheCompiledFileAtOnce() throws {
        let (app, domain) = LinksServer.names()
        let api = try LinksServer.shared.apiToken
        #expect(try LinksServer.tandem(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)"]).status == 0)
        #expect(try upload(domain, LinksServer.file(app, #"[{"/": "/one"}]"#), apiToken: api).status == 200)
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "open")
        #expect(try upload(domain, LinksServer.file(app, #"[{"/": "/two"}]"#), apiToken: api).status == 200)
        #expect(try LinksServer.match("https://\(domain)/one", app: app).decision == "noMatch")
        let two = try LinksServer.match("https://\(domain)/two", app: app)
        #expect(two.decision == "open")
        #expect(two.json["file"]?["version"] == .int(2))
    }

    @Test func matchNeedsASignedInUser() throws {
        let response = try LinksServer.match("https://example.com/", app: "ABCDE12345.com.example.x", token: .some(nil))
        #expect(response.status == 421)
        #expect(response.json.serverErrorCode == "AUTHENTICATION_REQUIRED")
    }

    @Test func unknownAppIsNotFoundAndAURLNeedsAHost() throws {
        let unknown = try LinksServer.match("https://example.com/", app: "ABCDE12345.com.example.nobody")
        #expect(unknown.status == 404)
        let (app, domain) = LinksServer.names()
        #expect(try LinksServer.tandem(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)"]).status == 0)
        let bare = try LinksServer.match("/just/a/path", app: app)
        #expect(bare.status == 400)
        let server = try LinksServer.shared.server
        let missing = try server.request("GET", "\(server.baseURL)/tandem/1/\(TestServer.container)/development/links/match?app=\(app)")
        #expect(missing.status == 400)
        // Universal links are http(s) URLs (ports are refused unless a fetch origin is set, as here).
        #expect(try LinksServer.match("ftp://\(domain)/x", app: app).status == 400)
    }
}
