import Foundation
import Testing
import TandemCore
import TandemTestSupport
import TandemCrypto

/// The web console (`/console/`, issue 18) over real HTTP: the first administrator, the console
/// session, CSRF, and every action, each checked against what the store then holds.
@Suite struct ConsoleTests {
    static let password = "console password"
    private static let lazy = LazyTestServer(arguments: TestServer.cheapHash)

    /// A server with an administrator (`root@example.com`), shared by the tests that need no first run.
    static var server: TestServer {
        get throws { try withAdmin(lazy.server) }
    }

    /// `server`, with `root@example.com` made its administrator if it has none.
    static func withAdmin(_ server: TestServer) throws -> TestServer {
        if try server.sqlite("SELECT count(*) FROM users WHERE server_admin = 1") == "0" {
            try server.addAdmin("root@example.com", password: password)
        }
        return server
    }

    /// A client signed in as the administrator of `server` (default: the shared server).
    static func admin(on server: TestServer? = nil) throws -> ConsoleClient {
        let client = ConsoleClient(try server.map(withAdmin) ?? Self.server)
        let answer = try client.signIn("root@example.com", password)
        guard answer.status == 303, client.cookies["tandem_console"] != nil else { throw TestFailure("sign-in: \(answer.status) \(answer.text)") }
        try client.get("/console/")
        return client
    }

    // MARK: First run

    @Test func firstRunLeadsFromTheRootToSetupAndTheCodeWorksOnce() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let code = try #require(server.setupCode, "the server printed no setup URL: \(server.standardError?.value ?? "")")
        let browser = ConsoleClient(server)
        let root = try browser.get("/")
        #expect(root.status == 303 && root.headers["location"] == "/console/")
        let console = try browser.get("/console/")
        #expect(console.status == 303 && console.headers["location"] == "/console/setup")
        #expect(try browser.get("/console/signin").headers["location"] == "/console/setup")
        let form = try browser.get("/console/setup?code=" + code)
        #expect(form.status == 200 && form.text.contains("Create the first admin"), "\(form.text)")
        #expect(form.text.contains("value=\"\(code)\""), "the code from the URL fills its field")
        #expect(form.headers["content-security-policy"] == "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
        #expect(!form.text.contains("<script>") && !form.text.contains("style="))

        let fields = ["email": "first@example.com", "password": "first password"]
        // No CSRF field, a wrong code, a short password: refused, and nobody became an administrator.
        #expect(try browser.post("/console/setup", fields.merging(["code": code, "csrf": ""]) { $1 }).status == 403)
        let wrong = try browser.post("/console/setup", fields.merging(["code": "not-the-code"]) { $1 })
        #expect(wrong.status == 403 && wrong.text.contains("setup code is wrong"), "\(wrong.text)")
        let short = try browser.post("/console/setup", ["code": code, "email": "first@example.com", "password": "short"])
        #expect(short.status == 400 && short.text.contains("<span class=\"field-error\" id=\"field-password-error\">a password needs at least 8"), "\(short.text)")
        #expect(wrong.text.contains("id=\"field-code-error\""), "the code's error is beside the code")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE server_admin = 1") == "0")

        let done = try browser.post("/console/setup", fields.merging(["code": code]) { $1 })
        #expect(done.status == 303 && done.headers["location"] == "/console/", "\(done.status) \(done.text)")
        #expect(browser.cookies["tandem_console"] != nil)
        #expect(try browser.get("/console/").status == 200)
        #expect(try server.sqlite("SELECT email, email_verified, server_admin FROM users WHERE server_admin = 1") == "first@example.com|1|1")
        #expect(try server.sqlite("SELECT count(*) FROM sign_in_methods m JOIN users u ON u.record_name = m.user_record_name WHERE u.email = 'first@example.com' AND m.secret LIKE '$argon2id$%'") == "1")

        // The code is spent: another browser cannot use it again, and setup now leads to sign-in.
        let other = ConsoleClient(server)
        try other.get("/console/setup?code=" + code)
        #expect(other.csrf.isEmpty, "the setup form is gone once an administrator exists")
        try other.get("/console/signin")
        let again = try other.post("/console/setup", ["code": code, "email": "second@example.com", "password": "second password"])
        #expect(again.status == 403 && again.text.contains("An administrator exists already"), "\(again.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = 'second@example.com'") == "0")
    }

    @Test func setupForAnExistingAccountNeedsItsPassword() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let code = try #require(server.setupCode)
        let app = try server.apiToken(origins: ["https://app.example"])
        try server.signUpVerified("owner@example.com", password: "owner password", apiToken: app)
        let browser = ConsoleClient(server)
        try browser.get("/console/setup")
        let wrong = try browser.post("/console/setup", ["code": code, "email": "owner@example.com", "password": "not the password"])
        #expect(wrong.status == 401 && wrong.text.contains("enter its password"), "\(wrong.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE server_admin = 1") == "0")
        let right = try browser.post("/console/setup", ["code": code, "email": "owner@example.com", "password": "owner password"])
        #expect(right.status == 303, "\(right.text)")
        #expect(try server.sqlite("SELECT server_admin FROM users WHERE email = 'owner@example.com'") == "1")
    }

    @Test func aServerWithAnAdministratorPrintsNoSetupCode() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        #expect(server.setupCode != nil)
        try server.addAdmin("root@example.com", password: Self.password)
        try server.start(extraArguments: TestServer.cheapHash)
        #expect(server.printedSetupCode == nil, "\(server.standardError?.value ?? "")")
        #expect(try ConsoleClient(server).get("/console/").headers["location"] == "/console/signin")
    }

    // MARK: CLI

    @Test func adminAddNeverMakesAnAccountWithoutAPassword() throws {
        let server = try Self.server
        let email = "\(unique("cli"))@example.com".lowercased()
        // No terminal and no --password-stdin: refused, nothing made.
        let none = try server.command(["admin", "add", email], input: "")
        #expect(none.status != 0 && none.errors.contains("password"), "\(none)")
        let short = try server.command(["admin", "add", email, "--password-stdin"], input: "short\n")
        #expect(short.status != 0 && short.errors.contains("at least 8"), "\(short)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = '\(email)'") == "0")
        let made = try server.command(["admin", "add", email, "--password-stdin"], input: "long enough password\n")
        #expect(made.status == 0 && made.output.contains("is a server administrator"), "\(made)")
        // An existing account with a password keeps it.
        let again = try server.command(["admin", "add", email], input: "")
        #expect(again.status == 0 && again.output.contains("password is unchanged"), "\(again)")
        let list = try server.command(["admin", "list"], input: "")
        #expect(list.output.contains(email))
        #expect(try server.command(["admin", "remove", email], input: "").status == 0)
        #expect(try !server.command(["admin", "list"], input: "").output.contains(email))
    }

    @Test func apiTokensAreListedAndRevokedFromTheCLI() throws {
        let server = try Self.server
        let token = try server.apiToken(origins: ["https://cli.example"])
        let id = String(Self.sha256Hex(token).prefix(16)).lowercased()
        let list = try server.command(["token", "list", "--api", "--container", TestServer.container], input: "")
        #expect(list.output.contains("\(id)\tactive\torigins=https://cli.example\tcallback=message"), "\(list)")
        #expect(try server.command(["token", "revoke", "--api", "nothex", "--container", TestServer.container], input: "").status == 1)
        let revoked = try server.command(["token", "revoke", "--api", id, "--container", TestServer.container], input: "")
        #expect(revoked.status == 0, "\(revoked)")
        #expect(try server.command(["token", "revoke", "--api", id, "--container", TestServer.container], input: "").status == 1, "once only")
        #expect(try server.command(["token", "list", "--api", "--container", TestServer.container], input: "").output.contains("\(id)\trevoked"))
    }

    // MARK: Session

    @Test func signInSetsAHardenedCookieAndSignOutEndsTheSession() throws {
        let server = try Self.server
        let browser = ConsoleClient(server)
        let signedOut = try browser.get("/console/users")
        #expect(signedOut.status == 303 && signedOut.headers["location"] == "/console/signin")
        let wrong = try browser.signIn("root@example.com", "wrong password")
        #expect(wrong.status == 401 && browser.cookies["tandem_console"] == nil)
        let answer = try browser.signIn("root@example.com", Self.password)
        #expect(answer.status == 303 && answer.headers["location"] == "/console/")
        let cookie = try #require(browser.setCookies.first { $0.hasPrefix("tandem_console=") })
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/console") && !cookie.contains("Secure"), "\(cookie)")
        let token = try #require(browser.cookies["tandem_console"])
        #expect(token.hasPrefix("tdc_"))
        // Stored by hash only, with idle and absolute limits.
        #expect(try server.sqlite("SELECT count(*) FROM console_sessions WHERE hash = X'\(Self.sha256Hex(token))' AND idle_ms = 3600000 AND expires_at - created_at = 43200000") == "1")
        // Every stored hash is a SHA-256 (32 bytes), too short to hold the longer token.
        #expect(token.utf8.count > 32)
        #expect(try server.sqlite("SELECT count(*) FROM console_sessions WHERE length(hash) <> 32") == "0")
        #expect(try browser.get("/console/users").status == 200)
        let out = try browser.post("/console/signout")
        #expect(out.status == 303 && out.headers["location"] == "/console/signin?done=signed-out")
        #expect(try browser.get("/console/signin?done=signed-out").text.contains("You signed out."))
        #expect(browser.setCookies.last?.contains("Max-Age=0") == true)
        // The old cookie no longer works.
        let replay = try browser.request("GET", "/console/users", cookies: ["tandem_console": token])
        #expect(replay.status == 303 && replay.headers["location"] == "/console/signin")
    }

    /// The limits are read from the stored session on every request: a session last used over an
    /// hour ago, or past its 12 hours, leads to sign-in.
    @Test func idleAndAbsoluteLimitsEndASession() throws {
        let server = try Self.server
        for column in ["last_used_at = last_used_at - 3600001", "expires_at = created_at - 1"] {
            let browser = try Self.admin()
            let hash = Self.sha256Hex(try #require(browser.cookies["tandem_console"]))
            #expect(try browser.get("/console/users").status == 200)
            _ = try server.sqlite("UPDATE console_sessions SET \(column) WHERE hash = X'\(hash)'")
            let after = try browser.get("/console/users")
            #expect(after.status == 303 && after.headers["location"] == "/console/signin", "\(column): \(after.status)")
        }
    }

    @Test func signInIsRateLimitedLikeTheSignInPage() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "2,50,600"])
        try server.addAdmin("root@example.com", password: Self.password)
        let browser = ConsoleClient(server)
        #expect(try browser.signIn("root@example.com", "wrong 1").status == 401)
        #expect(try browser.signIn("root@example.com", "wrong 2").status == 401)
        let throttled = try browser.signIn("root@example.com", Self.password)
        #expect(throttled.status == 429 && throttled.headers["retry-after"] != nil, "\(throttled.status)")
        #expect(browser.cookies["tandem_console"] == nil)
    }

    @Test func anAdministratorDemotedWhileSignedInLosesTheAdministratorsPagesAndCanSignOut() throws {
        let server = try Self.server
        // An account that is not an administrator signs in (C50) and sees its own console.
        let app = try server.apiToken(origins: ["https://app.example"])
        let email = "\(unique("person"))@example.com"
        try server.signUpVerified(email, password: "person password", apiToken: app)
        let person = ConsoleClient(server)
        #expect(try person.signIn(email, "person password").status == 303 && person.cookies["tandem_console"] != nil)
        #expect(try person.get("/console/").text.contains("id=\"member-note\""))

        // An administrator demoted while signed in is refused the administrators' pages at the next request.
        let former = "\(unique("former"))@example.com"
        try server.addAdmin(former, password: Self.password)
        let browser = ConsoleClient(server)
        #expect(try browser.signIn(former, Self.password).status == 303)
        #expect(try browser.get("/console/users").status == 200)
        #expect(try server.command(["admin", "remove", former], input: "").status == 0)
        let after = try browser.get("/console/users")
        #expect(after.status == 403 && after.text.contains("not one") && after.text.contains("id=\"signout-submit\""), "\(after.text)")
        let json = try browser.get("/console/metrics.json")
        #expect(json.status == 403 && json.json.serverErrorCode == "ACCESS_DENIED")
        // The 403 page's Sign out works (it was refused before C54).
        let hash = Self.sha256Hex(browser.cookies["tandem_console"] ?? "")
        let out = try browser.post("/console/signout")
        #expect(out.status == 303 && out.headers["location"] == "/console/signin?done=signed-out", "\(out.status) \(out.text)")
        #expect(try server.sqlite("SELECT revoked_at IS NOT NULL FROM console_sessions WHERE hash = X'\(hash)'") == "1")
        #expect(try browser.get("/console/").headers["location"] == "/console/signin")
    }

    @Test func aFormWithoutItsCSRFFieldChangesNothing() throws {
        let browser = try Self.admin()
        let server = browser.server
        let id = "iCloud.com.example.\(unique("csrf"))"
        #expect(try browser.post("/console/containers", ["id": id, "csrf": ""]).status == 403)
        #expect(try browser.post("/console/containers", ["id": id, "csrf": String(repeating: "0", count: 64)]).status == 403)
        // A CSRF field from another browser's cookie does not fit this one.
        let other = try Self.admin()
        #expect(try browser.post("/console/containers", ["id": id, "csrf": other.csrf]).status == 403 || other.csrf == browser.csrf)
        #expect(try server.sqlite("SELECT count(*) FROM containers WHERE id = '\(id)'") == "0")
        #expect(try browser.post("/console/containers", ["id": id]).status == 303)
        #expect(try server.sqlite("SELECT count(*) FROM containers WHERE id = '\(id)'") == "1")
    }

    // MARK: Containers

    @Test func containersAndAPITokensAreMadeListedAndRevoked() throws {
        let browser = try Self.admin()
        let server = browser.server
        let bad = try browser.post("/console/containers", ["id": "has space"])
        #expect(bad.status == 400 && bad.text.contains("field-id-error"), "\(bad.text)")
        let id = "iCloud.com.example.\(unique("app"))"
        let made = try browser.post("/console/containers", ["id": id])
        #expect(made.status == 303 && made.headers["location"] == "/console/containers/\(id)")
        let list = try browser.get("/console/")
        #expect(list.text.contains(">\(id)</a>"))
        let page = try browser.get("/console/containers/\(id)")
        #expect(page.status == 200 && page.text.contains("development: 0 zones") && page.text.contains("production: 0 zones"))

        let refused = try browser.post("/console/containers/\(id)/tokens", ["origins": "not an origin"])
        #expect(refused.status == 400 && refused.text.contains("field-origins-error"), "\(refused.text)")
        let posted = try browser.post("/console/containers/\(id)/tokens", ["origins": "https://app.example, http://localhost:3000", "callback": "https://app.example/done"])
        // Post, redirect, get (C52): the secret is on the page the redirect leads to, once, and never in a URL.
        let location = posted.headers["location"] ?? ""
        #expect(posted.status == 303 && location == "/console/containers/\(id)?created=token", "\(posted.status) \(posted.text)")
        let created = try browser.get(location)
        #expect(created.status == 200, "\(created.text)")
        let token = try #require(created.text.range(of: #"id="new-token">tdk_[A-Za-z0-9_-]+"#, options: .regularExpression)
            .map { String(created.text[$0].dropFirst("id=\"new-token\">".count)) })
        #expect(created.text.contains("https://app.example http://localhost:3000") && created.text.contains("https://app.example/done"))
        // The token is the CLI's kind of API token: the sign-in page opens for it.
        let signin = try server.request("GET", "\(server.baseURL)/signin?ckAPIToken=\(token)", token: .some(nil))
        #expect(signin.status == 200 || signin.status == 303, "\(signin.status)")
        let cli = try server.command(["token", "list", "--api", "--container", id], input: "")
        let tokenID = try #require(cli.output.split(separator: "\t").first.map(String.init), "\(cli)")
        #expect(created.text.contains("revoke-token-\(tokenID)"))
        // Reloading shows the secret no more and makes no second token; another session never sees it.
        let reloaded = try browser.get(location)
        #expect(reloaded.status == 200 && !reloaded.text.contains(token) && reloaded.text.contains("id=\"created-gone\""), "\(reloaded.text)")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE container_id = '\(id)' AND kind = 'api'") == "1")
        #expect(!location.contains("tdk_"))

        let revoked = try browser.post("/console/containers/\(id)/tokens/revoke", ["token": tokenID])
        #expect(revoked.status == 303 && revoked.headers["location"] == "/console/containers/\(id)?done=token-revoked")
        let after = try browser.get("/console/containers/\(id)?done=token-revoked")
        #expect(after.text.contains("The API token was revoked.") && !after.text.contains("revoke-token-\(tokenID)"))
        #expect(try server.command(["token", "list", "--api", "--container", id], input: "").output.contains("\trevoked\t"))
        let closed = try server.request("GET", "\(server.baseURL)/signin?ckAPIToken=\(token)", token: .some(nil))
        #expect(closed.status == 400, "a revoked API token opens no sign-in page: \(closed.status)")
        #expect(try browser.post("/console/containers/\(id)/tokens/revoke", ["token": tokenID]).status == 404)
        #expect(try browser.get("/console/containers/iCloud.com.example.none").status == 404)
    }

    @Test func sharesAreListedWithTheirOwnerAndPermission() throws {
        let browser = try Self.admin()
        let server = browser.server
        let created = try LandingPageBrowserTests.share(server, title: "Console share", publicPermission: "READ_ONLY")
        let page = try browser.get("/console/containers/\(TestServer.container)/shares/development")
        #expect(page.status == 200)
        let row = try #require(page.text.components(separatedBy: "<tr>").first { $0.contains(created.shortGUID) }, "\(page.text)")
        #expect(row.contains(">ada@example.com</a>") && row.contains("<td>\(created.zone)</td>") && row.contains("<td>READ_ONLY</td>"), "\(row)")
        #expect(!(try browser.get("/console/containers/\(TestServer.container)/shares/production").text.contains(created.shortGUID)))
        #expect(try browser.get("/console/containers/\(TestServer.container)/shares/staging").status == 404)
    }

    @Test func serverKeysAreListedAndRevoked() throws {
        let browser = try Self.admin()
        let server = browser.server
        let key = try server.serverKey(user: "ada@example.com")
        let page = try browser.get("/console/containers/\(TestServer.container)")
        #expect(page.text.contains(key.id), "\(page.text)")
        let signed = try server.signed("POST", "records/query", body: ["query": ["recordType": "Note"]], key: key)
        #expect(signed.status == 200, "\(signed.text)")
        #expect(try browser.post("/console/containers/iCloud.com.example.none/keys/revoke", ["key": key.id]).status == 404)
        let revoked = try browser.post("/console/containers/\(TestServer.container)/keys/revoke", ["key": key.id])
        #expect(revoked.status == 303, "\(revoked.text)")
        let location = try #require(revoked.headers["location"])
        #expect(try browser.get(location).text.contains("The server-to-server key was revoked."))
        let refused = try server.signed("POST", "records/query", body: ["query": ["recordType": "Note"]], key: key)
        #expect(refused.status == 401, "\(refused.text)")
    }

    @Test func schemasAreShownAndImportedWithErrorsAtLineAndColumn() throws {
        let browser = try Self.admin()
        let server = browser.server
        let id = "iCloud.com.example.\(unique("schema"))"
        try TestServer.admin(["container", "create", id, "--data", server.dataDirectory])
        let empty = try browser.get("/console/containers/\(id)/schema/development")
        #expect(empty.status == 200 && empty.text.contains("No record types yet."), "\(empty.text)")
        let ckdb = "/console/containers/\(id)/schema/development/ckdb"

        let broken = "DEFINE SCHEMA\n  RECORD TYPE Note (\n    title STRNG QUERYABLE\n  );\n"
        let refused = try browser.post(ckdb, ["ckdb": broken])
        #expect(refused.status == 400 && refused.text.contains("Line 3, column 11:"), "\(refused.text)")
        #expect(refused.text.contains("field-ckdb-error") && refused.text.contains("title STRNG QUERYABLE"), "the text comes back to be fixed")
        #expect(try server.sqlite("SELECT count(*) FROM schemas WHERE container_id = '\(id)'") == "0")

        let text = "DEFINE SCHEMA\n  CREATE ROLE editor;\n  RECORD TYPE Note (\n    title STRING QUERYABLE SORTABLE,\n    body STRING SEARCHABLE,\n    GRANT READ TO \"_world\",\n    GRANT WRITE, CREATE TO editor\n  );\n"
        let imported = try browser.post(ckdb, ["ckdb": text])
        #expect(imported.status == 200 && imported.text.contains("Saved: "), "\(imported.text)")
        let shown = try browser.get("/console/containers/\(id)/schema/development")
        #expect(shown.text.contains("<td>title</td><td>STRING</td>") && shown.text.contains("id=\"type0-field0-indexes-queryable\" checked"), "\(shown.text)")
        #expect(shown.text.contains("READ to _world") && shown.text.contains("CREATE, WRITE to editor") && shown.text.contains("Custom roles: editor"))
        let exported = try TestServer.admin(["schema", "export", "--container", id, "--environment", "development", "--data", server.dataDirectory])
        #expect(!exported.isEmpty)
        #expect(try server.sqlite("SELECT count(*) FROM schemas WHERE container_id = '\(id)' AND environment = 'development'") == "1")

        // Deploying lists what production would get, then applies it as `tandem schema promote`.
        let diff = try browser.get("/console/containers/\(id)/schema/diff")
        #expect(diff.text.contains("<td>Note</td><td>—</td><td>added</td><td>2 fields, 2 grants</td>"), "\(diff.text)")
        let deployed = try browser.post("/console/containers/\(id)/schema/deploy")
        #expect(deployed.status == 200 && deployed.text.contains("Deployed to production"), "\(deployed.text)")
        #expect(try browser.get("/console/containers/\(id)/schema/diff").text.contains("Production has this schema already."))
        let production = try browser.get("/console/containers/\(id)/schema/production")
        #expect(production.text.contains("<td>title</td><td>STRING</td><td>QUERYABLE, SORTABLE</td>") && !production.text.contains("schema/development/edit"),
                "production's page is read-only: \(production.text)")
        // Removing Note from development can lose data too: refused without the box (F2), applied with it.
        let unforcedImport = try browser.post(ckdb, ["ckdb": "DEFINE SCHEMA\n  CREATE ROLE editor;\n"])
        #expect(unforcedImport.status == 400 && unforcedImport.text.contains("removed record type Note"), "\(unforcedImport.text)")
        #expect(try browser.post(ckdb, ["ckdb": "DEFINE SCHEMA\n  CREATE ROLE editor;\n", "force": "yes"]).status == 200)
        let marked = try browser.get("/console/containers/\(id)/schema/diff")
        #expect(marked.text.contains("<td>Note</td><td>—</td><td>removed</td><td>—</td><td>2 fields</td><td><strong>Can lose production data:</strong> clients can no longer read or write its records</td>"),
                "\(marked.text)")
        let unforcedDeploy = try browser.post("/console/containers/\(id)/schema/deploy")
        #expect(unforcedDeploy.status == 400 && unforcedDeploy.text.contains("deploy-error") && unforcedDeploy.text.contains("nothing was changed"))
        #expect(try server.sqlite("SELECT text LIKE '%Note%' FROM schemas WHERE container_id = '\(id)' AND environment = 'production'") == "1")
        #expect(try browser.post("/console/containers/\(id)/schema/deploy", ["force": "yes"]).status == 200)
        #expect(try server.sqlite("SELECT text LIKE '%Note%' FROM schemas WHERE container_id = '\(id)' AND environment = 'production'") == "0")

        // Production is changed only by deploying (C34): its text and edit forms are refused.
        let direct = try browser.post("/console/containers/\(id)/schema/production/ckdb", ["ckdb": text])
        #expect(direct.status == 400 && direct.text.contains("only by deploying"), "\(direct.text)")
        #expect(try server.sqlite("SELECT text LIKE '%Note%' FROM schemas WHERE container_id = '\(id)' AND environment = 'production'") == "0")
        #expect(try browser.get("/console/containers/\(id)/schema/staging").status == 404)
    }

    // MARK: Users

    @Test func usersAreFoundAndTheirSessionsRevokedEmailVerifiedAndAccountRemoved() throws {
        let browser = try Self.admin()
        let server = browser.server
        let email = "\(unique("grace"))@example.com"
        let recordName = try TestServer.admin(["user", "add", "--email", email, "--name", "Grace Hopper", "--data", server.dataDirectory])
        let first = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        let second = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        let zone = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(unique("console"))]]]]],
                                   token: .some(first))
        #expect(zone.status == 200, "\(zone.text)")

        let subscribed = try server.post("subscriptions/modify", ["operations": [["operationType": "create", "subscription": [
            "subscriptionID": "console-watch", "subscriptionType": "query", "query": ["recordType": "Memo"], "firesOn": ["create"]]]]], token: .some(first))
        #expect(subscribed.status == 200, "\(subscribed.text)")

        let search = try browser.get("/console/users?q=" + String(email.prefix(10)))
        #expect(search.status == 200 && search.text.contains(">\(email)</a>"), "\(search.text)")
        #expect(try browser.get("/console/users?q=Hopper").text.contains(recordName))
        #expect(!(try browser.get("/console/users?q=%25no-such-person%25").text.contains(recordName)))
        let page = try browser.get("/console/users/\(recordName)")
        #expect(page.status == 200 && page.text.contains("unverified"))
        #expect(page.text.contains("<td>\(TestServer.container)</td><td>development</td><td>private</td><td>console-watch</td><td>records of type Memo</td>"),
                "\(page.text)")
        let sessions = page.text.components(separatedBy: "name=\"session\" value=\"").dropFirst().map { String($0.prefix(16)) }
        #expect(sessions.count == 2, "\(page.text)")

        let one = try browser.post("/console/users/\(recordName)/sessions/revoke", ["session": sessions[0]])
        #expect(one.status == 303 && one.headers["location"] == "/console/users/\(recordName)?done=sessions-revoked")
        let alive = [try server.currentUser(first), try server.currentUser(second)]
        #expect(alive.filter { $0 == recordName }.count == 1, "one session revoked at once: \(alive)")
        #expect(try browser.post("/console/users/\(recordName)/sessions/revoke", ["all": "yes"]).status == 303)
        #expect(try server.currentUser(first) != recordName && server.currentUser(second) != recordName)

        #expect(try browser.post("/console/users/\(recordName)/verify").status == 303)
        #expect(try browser.get("/console/users/\(recordName)").text.contains("<span id=\"email-status\">verified</span>"))

        let confirm = try browser.get("/console/users/\(recordName)/remove")
        #expect(confirm.status == 200 && confirm.text.contains("Type \(email) to confirm"))
        #expect(confirm.text.contains("<li id=\"goes-zones\">1 private zone</li><li id=\"goes-records\">0 records in them</li>"), "what goes is counted first: \(confirm.text)")
        let mistyped = try browser.post("/console/users/\(recordName)/remove", ["confirm": "someone@example.com"])
        #expect(mistyped.status == 400 && mistyped.text.contains("field-confirm-error"))
        #expect(try server.sqlite("SELECT deleted_at IS NULL FROM users WHERE record_name = '\(recordName)'") == "1")
        let removed = try browser.post("/console/users/\(recordName)/remove", ["confirm": email])
        #expect(removed.status == 200 && removed.text.contains("<dd id=\"zones\">1</dd>"), "\(removed.text)")
        #expect(try server.sqlite("SELECT deleted_at IS NOT NULL FROM users WHERE record_name = '\(recordName)'") == "1")
        #expect(try browser.get("/console/users/\(recordName)").status == 404)
    }

    // MARK: Logs and metrics

    @Test func theRequestLogShowsTheErrorBodysUUIDAndFilters() throws {
        let browser = try Self.admin()
        let server = browser.server
        let failed = try server.request("GET", "\(server.baseURL)/database/1/\(TestServer.container)/development/private/no-such-operation")
        let uuid = try #require(failed.json["uuid"]?.stringValue, "\(failed.text)")
        let page = try browser.get("/console/logs?status=4xx&path=/database/1/")
        #expect(page.status == 200 && page.text.contains(uuid), "\(page.text.prefix(2000))")
        #expect(!page.text.contains("<td>/console/"), "the path filter keeps console requests out")
        let json = try browser.get("/console/logs.json?status=\(failed.status)")
        let entries = try #require(json.json["entries"]?.arrayValue)
        let entry = try #require(entries.first { $0["uuid"]?.stringValue == uuid })
        #expect(entry["method"]?.stringValue == "GET" && entry["status"]?.int64Value == Int64(failed.status))
        #expect(entry["path"]?.stringValue?.hasSuffix("/no-such-operation") == true)
        // Only entries after the last one seen.
        let after = try #require(json.json["after"]?.int64Value)
        let later = try browser.get("/console/logs.json?status=\(failed.status)&after=\(after)")
        #expect(later.json["entries"]?.arrayValue?.contains { $0["uuid"]?.stringValue == uuid } == false)
        // An error body's uuid finds its one request.
        let byID = try browser.get("/console/logs?id=" + uuid.uppercased())
        #expect(byID.text.components(separatedBy: "<tr class=").count == 2 && byID.text.contains(uuid), "\(byID.text.prefix(3000))")
        let invalid = try browser.get("/console/logs?status=abc")
        #expect(invalid.status == 400 && invalid.text.contains("field-status-error"))
    }

    @Test func chartsAreDrawnFromTheMetricsCounters() throws {
        let browser = try Self.admin()
        let page = try browser.get("/console/metrics")
        #expect(page.status == 200)
        for id in ["chart-requests-rate", "chart-latency-p50", "chart-latency-p99", "chart-errors-server", "chart-connections-open"] {
            #expect(page.text.contains("id=\"\(id)\""), "\(id)")
        }
        Thread.sleep(forTimeInterval: 1.1)
        for _ in 0..<5 { _ = try browser.server.request("GET", "\(browser.server.baseURL)/healthz", token: .some(nil)) }
        let json = try browser.get("/console/metrics.json")
        let charts = try #require(json.json["charts"])
        let points = try #require(charts["chart-requests"]?["points"]?["rate"]?.stringValue)
        #expect(!points.isEmpty, "\(json.text)")
        let summary = charts["chart-requests"]?["summary"]?.stringValue ?? ""
        #expect(summary.hasPrefix("Now: requests ") && !summary.hasPrefix("Now: requests 0.00"), "\(summary)")
    }

    static func sha256Hex(_ text: String) -> String {
        Digest.hex(Digest.sha256(Array(text.utf8))).uppercased()
    }
}
