import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Every accounts endpoint × every kind of caller, against the real server (DESIGN.md §6; the
/// sharing endpoints' matrix is AuthorizationMatrixTests). Each case gets fresh tokens, so a case
/// that signs out or revokes cannot disturb another. "ok" means HTTP 200; otherwise the expected
/// `serverErrorCode`.
@Suite("Accounts authorization matrix")
struct AccountAuthorizationMatrixTests {
    enum Caller: String, CaseIterable, CustomStringConvertible {
        /// A web auth token from sign-in to this container, with the container's API token.
        case webToken
        /// A CLI-made user token (every container), with the API token.
        case cliToken
        /// A web auth token issued for another container, with this container's API token.
        case otherContainerToken
        /// A web auth token that was signed out, with the API token.
        case revokedToken
        /// The container's API token and no user.
        case apiTokenOnly
        /// Another container's API token and no user.
        case otherAPIToken
        case anonymous
        var description: String { rawValue }
    }

    enum Endpoint: String, CaseIterable, CustomStringConvertible {
        case signup, verify, signin, passwordReset, passwordSet, signout, account, sessions, sessionsRevoke, signinPage, accountDelete, accountDeletePage
        case tokenExchange, oidcStart, oidcCallback
        /// The sign-in page's passkey steps (CSRF-protected forms; user tokens play no part).
        case passkeyOptions, passkeySignIn, passkeySignUp
        case accountSettings
        /// `POST signout` with no body and no content-length (`curl -X POST`; A40).
        case signoutBodiless
        /// The sign-in page opened from a share page (`/signin?return=/share/{shortGUID}`; A47).
        case sharePageSignIn
        /// Avatars (A48): set (a PNG body), remove, and a signed download URL of another account's.
        case accountAvatar, accountAvatarRemove, avatarDownload
        /// `GET /healthz` (P60): no authentication; it reads the store whoever asks.
        case healthz
        var description: String { rawValue }
    }

    static let required = "AUTHENTICATION_REQUIRED"
    static let failed = "AUTHENTICATION_FAILED"

    /// In `Caller.allCases` order: webToken, cliToken, otherContainerToken, revokedToken, apiTokenOnly, otherAPIToken, anonymous.
    static let expected: [Endpoint: [String]] = [
        .signup:         ["ok", "ok", "ok", "ok", "ok", failed, failed],
        .verify:         [failed, failed, failed, failed, failed, failed, failed],   // an unknown link, or no API token
        .signin:         ["ok", "ok", "ok", "ok", "ok", failed, failed],
        .passwordReset:  ["ok", "ok", "ok", "ok", "ok", failed, failed],
        .passwordSet:    [failed, failed, failed, failed, failed, failed, failed],   // an unknown link, or no API token
        .signout:        ["ok", "ok", failed, failed, required, required, required],
        .account:        ["ok", "ok", failed, failed, required, required, required],
        .sessions:       ["ok", "ok", failed, failed, required, required, required],
        .sessionsRevoke: ["NOT_FOUND", "NOT_FOUND", failed, failed, required, required, required],
        .signinPage:     ["ok", "ok", "ok", "ok", "ok", "HTTP 400", "HTTP 400"],
        // With a wrong password, so the matrix's account survives: a signed-in caller gets as far as the password check.
        .accountDelete:  ["ACCESS_DENIED", "ACCESS_DENIED", failed, failed, required, required, required],
        .accountDeletePage: ["ok", "ok", "ok", "ok", "ok", "HTTP 400", "HTTP 400"],
        // A token the loopback provider minted: the API token decides, a user token plays no part.
        .tokenExchange:  ["ok", "ok", "ok", "ok", "ok", failed, failed],
        // Redirects to the provider's authorization page (followed: its 200) for the app only.
        .oidcStart:      ["ok", "ok", "ok", "ok", "ok", "HTTP 400", "HTTP 400"],
        // Without the flow cookie the browser got at the start, no callback is accepted.
        .oidcCallback:   ["HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403", "HTTP 403"],
        // With this app's page (its CSRF pair): options are issued, an empty answer is malformed;
        // without it the form check refuses (ACCESS_DENIED for the JSON step, 403 for the pages).
        .passkeyOptions: ["ok", "ok", "ok", "ok", "ok", "ACCESS_DENIED", "ACCESS_DENIED"],
        .passkeySignIn:  ["HTTP 400", "HTTP 400", "HTTP 400", "HTTP 400", "HTTP 400", "HTTP 403", "HTTP 403"],
        .passkeySignUp:  ["HTTP 400", "HTTP 400", "HTTP 400", "HTTP 400", "HTTP 400", "HTTP 403", "HTTP 403"],
        // POST account {invitationEmails} (A31).
        .accountSettings: ["ok", "ok", failed, failed, required, required, required],
        .signoutBodiless: ["ok", "ok", failed, failed, required, required, required],
        // Anyone may open it (a share URL reaches people who are signed out); credentials play no part.
        .sharePageSignIn: ["ok", "ok", "ok", "ok", "ok", "ok", "ok"],
        // The sender is authenticated from the head, before the picture is read.
        .accountAvatar: ["ok", "ok", failed, failed, required, required, required],
        .accountAvatarRemove: ["ok", "ok", failed, failed, required, required, required],
        // A capability URL: the signature names the reader; the caller's credentials play no part.
        .avatarDownload: ["ok", "ok", "ok", "ok", "ok", "ok", "ok"],
        // Unauthenticated for load balancers: credentials, good or bad, play no part.
        .healthz: ["ok", "ok", "ok", "ok", "ok", "ok", "ok"],
    ]

    struct World {
        var server: TestServer
        var app: String
        var otherApp: String
        var email: String
        var provider: OIDCProvider
        /// The avatar URL of another account (so that removing the matrix account's cannot race it).
        var avatarURL: String
    }

    /// A 1×1 PNG.
    static let png = Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")!

    static let lock = NSLock()
    nonisolated(unsafe) static var shared: World?

    static func world() throws -> World {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        let provider = try OIDCProvider()
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "1000,1000,60", "--webhook-allow", "127.0.0.0/8",
                                                                           "--oidc-exchange", "\(TestServer.container),\(provider.issuer),matrix",
                                                                           "--oidc-provider", "\(TestServer.container),Mock,\(provider.issuer),matrix"])
        _ = try TestServer.admin(["container", "create", "iCloud.com.example.matrix", "--data", server.dataDirectory])
        let app = try server.apiToken(origins: ["https://app.example"])
        let otherApp = try server.apiToken(container: "iCloud.com.example.matrix")
        let email = "matrix@example.com"
        try server.signUpVerified(email, password: "matrix password", apiToken: app)
        let pictured = try server.request("POST", "\(server.baseURL)/auth/1/\(TestServer.container)/account/avatar", body: png,
                                          token: .some(server.token), headers: ["Content-Type": "image/png"])
        guard let avatarURL = pictured.json["avatarURL"]?.stringValue else { throw TestFailure("account/avatar: \(pictured.text)") }
        // One exchange first, so the issuer's keys are cached: while they are being fetched, a
        // concurrent exchange is answered TRY_AGAIN_LATER at once (A19), and the cases run in parallel.
        let primed = try server.auth("token/exchange", ["idToken": .string(try provider.mint(sub: "matrix-primer", clientID: "matrix"))], apiToken: app)
        guard primed.status == 200 else { throw TestFailure("token/exchange: \(primed.text)") }
        let made = World(server: server, app: app, otherApp: otherApp, email: email, provider: provider, avatarURL: avatarURL)
        shared = made
        return made
    }

    /// The caller's API token and user token, made fresh.
    static func credentials(_ world: World, _ caller: Caller) throws -> (api: String?, user: String?) {
        let server = world.server
        func web(_ app: String, _ container: String) throws -> String {
            let response = try server.auth("signin", ["email": .string(world.email), "password": "matrix password", "consent": true],
                                           apiToken: app, container: container)
            guard let token = response.json["ckWebAuthToken"]?.stringValue else { throw TestFailure("signin: \(response.text)") }
            return token
        }
        switch caller {
        case .webToken: return (world.app, try web(world.app, TestServer.container))
        case .cliToken: return (world.app, try TestServer.admin(["token", "create", "--user", world.email, "--data", server.dataDirectory]))
        case .otherContainerToken: return (world.app, try web(world.otherApp, "iCloud.com.example.matrix"))
        case .revokedToken:
            let token = try web(world.app, TestServer.container)
            _ = try server.auth("signout", [:], bearer: token)
            return (world.app, token)
        case .apiTokenOnly: return (world.app, nil)
        case .otherAPIToken: return (world.otherApp, nil)
        case .anonymous: return (nil, nil)
        }
    }

    @Test("endpoint × caller", arguments: Endpoint.allCases, Caller.allCases)
    func matrix(endpoint: Endpoint, caller: Caller) throws {
        let world = try Self.world()
        let server = world.server
        let (api, user) = try Self.credentials(world, caller)
        let response: TestServer.Response
        switch endpoint {
        case .signup:
            response = try server.auth("signup", ["email": .string("\(unique("m"))@example.com"), "password": "long enough"], apiToken: api, bearer: user)
        case .verify:
            response = try server.auth("verify", ["token": "not-a-link"], apiToken: api, bearer: user)
        case .signin:
            response = try server.auth("signin", ["email": .string(world.email), "password": "matrix password", "consent": true], apiToken: api, bearer: user)
        case .passwordReset:
            response = try server.auth("password/reset", ["email": .string(world.email)], apiToken: api, bearer: user)
        case .passwordSet:
            response = try server.auth("password/set", ["token": "not-a-link", "password": "long enough"], apiToken: api, bearer: user)
        case .signout:
            response = try server.auth("signout", [:], apiToken: api, bearer: user)
        case .account:
            response = try server.auth("account", apiToken: api, bearer: user)
        case .sessions:
            response = try server.auth("sessions", apiToken: api, bearer: user)
        case .sessionsRevoke:
            response = try server.auth("sessions/revoke", ["sessionID": "0123456789abcdef"], apiToken: api, bearer: user)
        case .accountSettings:
            response = try server.auth("account", ["invitationEmails": true], apiToken: api, bearer: user)
        case .signoutBodiless:
            let socket = try RawSocket(port: server.port)
            let query = api.map { "?ckAPIToken=" + ($0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") } ?? ""
            socket.send("POST /auth/1/\(TestServer.container)/signout\(query) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        + (user.map { "Authorization: Bearer \($0)\r\n" } ?? "") + "\r\n")
            let reply = socket.readUntilClosed(seconds: 20)
            response = TestServer.Response(status: reply.status ?? 0, body: Data(reply.body.utf8), headers: [:])
        case .sharePageSignIn:
            response = try server.request("GET", server.baseURL + "/signin?return=%2Fshare%2F" + String(repeating: "c", count: 26), token: .some(user))
        case .accountAvatar:
            var url = "\(server.baseURL)/auth/1/\(TestServer.container)/account/avatar"
            if let api { url += "?ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("POST", url, body: Self.png, token: .some(user), headers: ["Content-Type": "image/png"])
        case .accountAvatarRemove:
            response = try server.auth("account/avatar/remove", [:], apiToken: api, bearer: user)
        case .avatarDownload:
            var url = world.avatarURL
            if let api { url += "&ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("GET", url, token: .some(user))
        case .healthz:
            var url = server.baseURL + "/healthz"
            if let api { url += "?ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("GET", url, token: .some(user))
        case .accountDelete:
            response = try server.auth("account/delete", ["password": "not the password"], apiToken: api, bearer: user)
        case .signinPage, .accountDeletePage:
            var url = server.baseURL + (endpoint == .signinPage ? "/signin" : "/signin/account/delete")
            if let api, api == world.app { url += "?ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("GET", url, token: .some(user))
        case .tokenExchange:
            let idToken = try world.provider.mint(sub: unique("matrix"), clientID: "matrix")
            response = try server.auth("token/exchange", ["idToken": .string(idToken)], apiToken: api, bearer: user)
        case .oidcStart:
            var url = server.baseURL + "/signin/oidc/start?provider=Mock"
            if let api, api == world.app { url += "&ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("GET", url, token: .some(user))
        case .oidcCallback:
            var url = server.baseURL + "/signin/oidc/callback?code=c&state=s"
            if let api { url += "&ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
            response = try server.request("GET", url, token: .some(user))
        case .passkeyOptions, .passkeySignIn, .passkeySignUp:
            // WebAuthn needs a domain, so the page is opened at localhost.
            let base = "http://localhost:\(server.port)"
            var cookie = "tandem_csrf=" + String(repeating: "A", count: 43), csrf = String(repeating: "0", count: 64)
            if let api, api == world.app {
                let form = try FormPage(try server.request("GET", base + "/signin?ckAPIToken=" + api.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                                           token: .some(nil)))
                (cookie, csrf) = (form.cookie, form.csrf)
            }
            let path = endpoint == .passkeyOptions ? "/signin/passkey/options" : endpoint == .passkeySignIn ? "/signin/passkey" : "/signin/passkey/signup"
            let fields = ["csrf": csrf, "ckAPIToken": api ?? "", "purpose": "get"]
            let body = fields.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)" }.joined(separator: "&")
            var headers = ["Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie]
            if let user { headers["Authorization"] = "Bearer " + user }
            response = try server.request("POST", base + path, body: Data(body.utf8), token: .some(nil), headers: headers)
        }
        let outcome = response.json.serverErrorCode ?? (response.status == 200 ? "ok" : "HTTP \(response.status)")
        let want = Self.expected[endpoint]![Caller.allCases.firstIndex(of: caller)!]
        #expect(outcome == want, "\(endpoint) as \(caller): \(response.status) \(response.text.prefix(300))")
    }
}

// MARK: The web console (issue 18)

/// Every console page and action × every kind of browser (decisions C3–C5, C50–C52). Outcomes:
/// "ok" (200, or a 303 that is not to sign-in), "signin" (303 to `/console/signin`), "HTTP 403",
/// "HTTP 404", or a JSON endpoint's `serverErrorCode`. An action refused for any reason must leave
/// the store as it was; one that is "ok" must change it (each case gets its own target). The
/// targets name other people's data (Ada's records, another owner's share, another account's
/// sessions) except the `own…` and `account…` rows, which act on the caller's own.
extension AccountAuthorizationMatrixTests {
    enum ConsoleCaller: String, CaseIterable, CustomStringConvertible {
        /// A live administrator session with the page's CSRF field.
        case admin
        /// The administrator's session, the form without its `csrf` field.
        case adminNoCSRF
        /// The administrator's session, a `csrf` field that does not fit the cookie.
        case adminWrongCSRF
        /// A fresh session of an account that is not an administrator (one that was demoted), with
        /// its CSRF field: it reaches only its own data (C50).
        case nonAdmin
        /// The administrator's session with a CSRF cookie and field taken from another visit (a
        /// signed-out sign-in page, as another site gets them) and the cookie planted (C63).
        case adminPlantedCSRF
        /// The administrator's session and its CSRF field, sent by a page of a sibling site
        /// (`Sec-Fetch-Site: same-site`, C63).
        case adminSameSite
        /// A session that was signed out.
        case signedOutSession
        /// No cookie at all.
        case anonymous
        var description: String { rawValue }
    }

    enum ConsoleEndpoint: String, CaseIterable, CustomStringConvertible {
        case home, containerCreate, containerPage, tokenCreate, tokenRevoke, keyRevoke, schemaPage, schemaImport, schemaDeploy, sharesPage
        case users, userPage, sessionsRevoke, verify, removePage, remove
        case logs, logsJSON, metrics, metricsJSON, signout
        /// A share's page in the console, and its invite form sent for the owner (C17).
        case sharePage, shareInvite
        /// The data browser, a record's page, and its save and delete forms (C20–C23).
        case dataPage, recordPage, recordSave, recordDelete
        /// The caller's own account page, its own session revoked, another account's session named there (C51).
        case account, accountSessionRevoke, accountSessionRevokeOther
        /// The caller's own private data and records, and a share the non-administrator owns (C50).
        case ownDataPage, ownRecordSave, ownShareInvite
        /// Subscriptions and push, Shared with You and live sessions (C40–C45).
        case subscriptionsPage, subscriptionDelete, webhooksPage, connectionsPage, sharedWithYouPage, linkTest
        /// Schema editing: the development page's edit form, the `.ckdb` page, the diff (C34–C36).
        case schemaEdit, schemaTextPage, schemaDiff
        var description: String { rawValue }

        var isJSON: Bool { self == .logsJSON || self == .metricsJSON }
        var isAction: Bool {
            [.containerCreate, .tokenCreate, .tokenRevoke, .keyRevoke, .schemaImport, .schemaDeploy, .sessionsRevoke, .verify, .remove, .signout,
             .shareInvite, .recordSave, .recordDelete, .accountSessionRevoke, .accountSessionRevokeOther, .ownRecordSave, .ownShareInvite,
             .subscriptionDelete, .linkTest, .schemaEdit].contains(self)
        }
    }

    /// What an account that is not an administrator gets (C50): its own pages; `403` from the
    /// administrators' pages and for acting as another account; `404` for a share it does not own.
    static func nonAdminExpected(_ endpoint: ConsoleEndpoint) -> String {
        switch endpoint {
        case .home, .containerPage, .sharesPage, .signout, .account, .accountSessionRevoke, .ownDataPage, .ownRecordSave, .ownShareInvite: "ok"
        case .logsJSON, .metricsJSON: "ACCESS_DENIED"
        case .sharePage, .shareInvite, .accountSessionRevokeOther: "HTTP 404"
        default: "HTTP 403"
        }
    }

    /// In `ConsoleCaller.allCases` order: admin, adminNoCSRF, adminWrongCSRF, nonAdmin, adminPlantedCSRF, adminSameSite,
    /// signedOutSession, anonymous.
    static func consoleExpected(_ endpoint: ConsoleEndpoint) -> [String] {
        // The account page is the caller's own for administrators too: another's session is not found there.
        let admin = endpoint == .accountSessionRevokeOther ? "HTTP 404" : "ok"
        if endpoint.isJSON { return ["ok", "ok", "ok", nonAdminExpected(endpoint), "ok", "ok", required, required] }
        if endpoint.isAction { return [admin, "HTTP 403", "HTTP 403", nonAdminExpected(endpoint), "HTTP 403", "HTTP 403", "signin", "signin"] }
        return [admin, admin, admin, nonAdminExpected(endpoint), admin, admin, "signin", "signin"]
    }

    struct ConsoleWorld {
        var server: TestServer
        /// An administrator who was demoted: an account that is not an administrator, with a
        /// password (each case signs it in afresh, so its sign-out disturbs no other case) and a
        /// user token (its share is `ownShareInvite`'s).
        var member: Person
        /// The administrator's user record name.
        var root: String
        /// Where the server fetches association files from (the link tester's row).
        var origin: AssociationOrigin
    }

    static let consoleLock = NSLock()
    nonisolated(unsafe) static var consoleShared: ConsoleWorld?

    static func consoleWorld() throws -> ConsoleWorld {
        consoleLock.lock()
        defer { consoleLock.unlock() }
        if let consoleShared { return consoleShared }
        let origin = try AssociationOrigin()
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "1000,1000,60", "--links-fetch-origin", origin.origin,
                                                                     "--webhook-allow", "127.0.0.0/8"])
        try server.addAdmin("root@example.com", password: "matrix password")
        try server.addAdmin("former@example.com", password: "matrix password")
        try TestServer.admin(["admin", "remove", "former@example.com", "--data", server.dataDirectory])
        let member = Person(recordName: try server.sqlite("SELECT record_name FROM users WHERE email = 'former@example.com'"), email: "former@example.com",
                            token: try TestServer.admin(["token", "create", "--user", "former@example.com", "--data", server.dataDirectory]))
        let world = ConsoleWorld(server: server, member: member, root: try server.sqlite("SELECT record_name FROM users WHERE email = 'root@example.com'"),
                                 origin: origin)
        consoleShared = world
        return world
    }

    /// A fresh target for an action, and a probe telling whether the action happened.
    struct ConsoleTarget {
        var path: String
        var fields: [String: String] = [:]
        var changed: () throws -> Bool = { false }
    }

    /// `session`: the browser whose console cookie the request sends; `actor`: the account it is
    /// signed in as (the administrator for the signed-out callers).
    static func consoleTarget(_ endpoint: ConsoleEndpoint, _ world: ConsoleWorld, session: ConsoleClient, actor: String) throws -> ConsoleTarget {
        let server = world.server
        let container = TestServer.container
        func user() throws -> (email: String, recordName: String, token: String) {
            let email = "\(unique("m"))@example.com".lowercased()
            let recordName = try TestServer.admin(["user", "add", "--email", email, "--data", server.dataDirectory])
            return (email, recordName, try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory]))
        }
        switch endpoint {
        case .home: return ConsoleTarget(path: "/console/")
        case .containerPage: return ConsoleTarget(path: "/console/containers/\(container)")
        case .users: return ConsoleTarget(path: "/console/users?q=example")
        case .userPage: return ConsoleTarget(path: "/console/users/\(server.userRecordName)")
        case .removePage: return ConsoleTarget(path: "/console/users/\(server.userRecordName)/remove")
        case .logs: return ConsoleTarget(path: "/console/logs?status=2xx")
        case .logsJSON: return ConsoleTarget(path: "/console/logs.json?path=/console/")
        case .metrics: return ConsoleTarget(path: "/console/metrics")
        case .metricsJSON: return ConsoleTarget(path: "/console/metrics.json")
        case .containerCreate:
            let id = "iCloud.com.example.\(unique("m"))"
            return ConsoleTarget(path: "/console/containers", fields: ["id": id]) { try server.sqlite("SELECT count(*) FROM containers WHERE id = '\(id)'") == "1" }
        case .sharesPage: return ConsoleTarget(path: "/console/containers/\(container)/shares/development")
        case .sharePage:
            let note = try server.shareNote(owner: try server.person("owner"))
            return ConsoleTarget(path: "/console/shares/\(note.guid)")
        case .shareInvite:
            let note = try server.shareNote(owner: try server.person("owner"))
            let email = "\(unique("m"))@example.com".lowercased()
            return ConsoleTarget(path: "/console/shares/\(note.guid)/invite", fields: ["email": email, "permission": "READ_ONLY"]) {
                try server.sqlite("SELECT count(*) FROM share_participants WHERE email = '\(email)'") == "1"
            }
        case .schemaPage: return ConsoleTarget(path: "/console/containers/\(container)/schema/production")
        case .schemaImport:
            let id = "iCloud.com.example.\(unique("m"))"
            try TestServer.admin(["container", "create", id, "--data", server.dataDirectory])
            return ConsoleTarget(path: "/console/containers/\(id)/schema/development/ckdb",
                                 fields: ["ckdb": "DEFINE SCHEMA\n  RECORD TYPE Note (title STRING QUERYABLE);\n"]) {
                try server.sqlite("SELECT count(*) FROM schemas WHERE container_id = '\(id)'") == "1"
            }
        case .schemaEdit:
            let id = "iCloud.com.example.\(unique("m"))"
            try TestServer.admin(["container", "create", id, "--data", server.dataDirectory])
            return ConsoleTarget(path: "/console/containers/\(id)/schema/development/edit", fields: ["change": "type-add", "type": "Matrix"]) {
                try server.sqlite("SELECT count(*) FROM schemas WHERE container_id = '\(id)' AND text LIKE '%Matrix%'") == "1"
            }
        case .schemaTextPage: return ConsoleTarget(path: "/console/containers/\(container)/schema/development/ckdb")
        case .schemaDiff: return ConsoleTarget(path: "/console/containers/\(container)/schema/diff")
        case .schemaDeploy:
            let id = "iCloud.com.example.\(unique("m"))"
            try TestServer.admin(["container", "create", id, "--data", server.dataDirectory])
            return ConsoleTarget(path: "/console/containers/\(id)/schema/deploy") {
                try server.sqlite("SELECT count(*) FROM schemas WHERE container_id = '\(id)' AND environment = 'production'") == "1"
            }
        case .tokenCreate:
            let origin = "https://\(unique("m").lowercased()).example"
            return ConsoleTarget(path: "/console/containers/\(container)/tokens", fields: ["origins": origin]) {
                try server.sqlite("SELECT count(*) FROM tokens WHERE origins = '\(origin)'") == "1"
            }
        case .tokenRevoke:
            let token = try server.apiToken(origins: ["https://app.example"])
            let hash = ConsoleTests.sha256Hex(token)
            return ConsoleTarget(path: "/console/containers/\(container)/tokens/revoke", fields: ["token": String(hash.prefix(16)).lowercased()]) {
                try server.sqlite("SELECT revoked_at IS NOT NULL FROM tokens WHERE hash = X'\(hash)'") == "1"
            }
        case .keyRevoke:
            let key = try server.serverKey(user: "ada@example.com")
            return ConsoleTarget(path: "/console/containers/\(container)/keys/revoke", fields: ["key": key.id]) {
                try server.sqlite("SELECT revoked_at IS NOT NULL FROM server_keys WHERE key_id = '\(key.id)'") == "1"
            }
        case .sessionsRevoke:
            let person = try user()
            return ConsoleTarget(path: "/console/users/\(person.recordName)/sessions/revoke", fields: ["all": "yes"]) {
                try server.sqlite("SELECT count(*) FROM tokens WHERE user_record_name = '\(person.recordName)' AND revoked_at IS NOT NULL") == "1"
            }
        case .verify:
            let person = try user()
            return ConsoleTarget(path: "/console/users/\(person.recordName)/verify") {
                try server.sqlite("SELECT email_verified FROM users WHERE record_name = '\(person.recordName)'") == "1"
            }
        case .remove:
            let person = try user()
            return ConsoleTarget(path: "/console/users/\(person.recordName)/remove", fields: ["confirm": person.email]) {
                try server.sqlite("SELECT deleted_at IS NOT NULL FROM users WHERE record_name = '\(person.recordName)'") == "1"
            }
        case .dataPage: return ConsoleTarget(path: "/console/containers/\(container)/data/development?database=private&user=ada%40example.com&type=Note")
        case .recordPage:
            let name = unique("m")
            try server.create(name, fields: ["title": Body.field("matrix")])
            return ConsoleTarget(path: "/console/containers/\(container)/data/development/record?database=private&user=ada%40example.com&name=\(name)")
        case .recordSave:
            let name = unique("m")
            return ConsoleTarget(path: "/console/containers/\(container)/data/development/record",
                                 fields: ["database": "private", "user": "ada@example.com", "name": name, "type": "Note", "rows": "1",
                                          "name0": "title", "type0": "STRING", "value0": "matrix"]) {
                try server.sqlite("SELECT count(*) FROM records WHERE name = '\(name)'") == "1"
            }
        case .recordDelete:
            let name = unique("m")
            let tag = try server.create(name, fields: ["title": Body.field("matrix")])["recordChangeTag"]?.stringValue ?? ""
            return ConsoleTarget(path: "/console/containers/\(container)/data/development/record/delete",
                                 fields: ["database": "private", "user": "ada@example.com", "name": name, "tag": tag]) {
                try server.sqlite("SELECT count(*) FROM records WHERE name = '\(name)'") == "0"
            }
        case .subscriptionsPage: return ConsoleTarget(path: "/console/containers/\(container)/subscriptions/development?database=private")
        case .webhooksPage: return ConsoleTarget(path: "/console/containers/\(container)/webhooks/development?subscription=none")
        case .connectionsPage: return ConsoleTarget(path: "/console/containers/\(container)/connections/development")
        case .sharedWithYouPage: return ConsoleTarget(path: "/console/containers/\(container)/sharedwithyou/development")
        case .subscriptionDelete:
            let person = try server.person("subscriber")
            let id = unique("m")
            _ = try server.subscribe(["subscriptionID": .string(id), "subscriptionType": "database"], as: person)
            return ConsoleTarget(path: "/console/containers/\(container)/subscriptions/development/delete",
                                 fields: ["owner": person.recordName, "database": "private", "subscription": id]) {
                try server.sqlite("SELECT count(*) FROM subscriptions WHERE subscription_id = '\(id)'") == "0"
            }
        case .linkTest:
            // Matching a domain with no stored file fetches it and stores what it got: the
            // tester is an action. The server fetches from a local origin serving this file.
            let tag = unique("m").lowercased().filter { $0.isLetter || $0.isNumber }
            let app = "ABCDE12345.com.example.\(tag)"
            try Self.consoleWorld().origin.serve("\(tag).example.com", .init(body: #"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": [{"/": "*"}]}]}}"#))
            _ = try TestServer.admin(["app", "add", app, "--container", container, "--domains", "applinks:\(tag).example.com", "--data", server.dataDirectory])
            return ConsoleTarget(path: "/console/containers/\(container)/sharedwithyou/development/test",
                                 fields: ["app": app, "url": "https://\(tag).example.com/a"]) {
                try server.sqlite("SELECT count(*) FROM association_files WHERE domain = '\(tag).example.com'") == "1"
            }
        case .signout:
            let hash = ConsoleTests.sha256Hex(session.cookies["tandem_console"] ?? "none")
            return ConsoleTarget(path: "/console/signout") {
                try server.sqlite("SELECT revoked_at IS NOT NULL FROM console_sessions WHERE hash = X'\(hash)'") == "1"
            }
        case .account: return ConsoleTarget(path: "/console/account")
        case .accountSessionRevoke, .accountSessionRevokeOther:
            let email = endpoint == .accountSessionRevoke ? try server.sqlite("SELECT email FROM users WHERE record_name = '\(actor)'") : try user().email
            let hash = ConsoleTests.sha256Hex(try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory]))
            return ConsoleTarget(path: "/console/account/sessions/revoke", fields: ["session": String(hash.prefix(16)).lowercased()]) {
                try server.sqlite("SELECT revoked_at IS NOT NULL FROM tokens WHERE hash = X'\(hash)'") == "1"
            }
        case .ownDataPage: return ConsoleTarget(path: "/console/containers/\(container)/data/development?database=private&type=Note")
        case .ownRecordSave:
            let name = unique("m")
            return ConsoleTarget(path: "/console/containers/\(container)/data/development/record",
                                 fields: ["database": "private", "name": name, "type": "Note", "rows": "1", "name0": "title", "type0": "STRING", "value0": "mine"]) {
                try server.sqlite("SELECT count(*) FROM records WHERE name = '\(name)'") == "1"
            }
        case .ownShareInvite:
            let note = try server.shareNote(owner: world.member)
            let email = "\(unique("m"))@example.com".lowercased()
            return ConsoleTarget(path: "/console/shares/\(note.guid)/invite", fields: ["email": email, "permission": "READ_ONLY"]) {
                try server.sqlite("SELECT count(*) FROM share_participants WHERE email = '\(email)'") == "1"
            }
        }
    }

    @Test("console endpoint × caller", arguments: ConsoleEndpoint.allCases, ConsoleCaller.allCases)
    func consoleMatrix(endpoint: ConsoleEndpoint, caller: ConsoleCaller) throws {
        let world = try Self.consoleWorld()
        let server = world.server
        // Every caller starts from a fresh administrator session, so a sign-out in one case cannot disturb another.
        let browser = ConsoleClient(server)
        guard try browser.signIn("root@example.com", "matrix password").status == 303 else { throw TestFailure("admin sign-in") }
        try browser.get("/console/")
        // The non-administrator's own fresh session, so its sign-out case disturbs no other.
        let member = ConsoleClient(server)
        if caller == .nonAdmin {
            guard try member.signIn(world.member.email, "matrix password").status == 303 else { throw TestFailure("member sign-in") }
            try member.get("/console/")
        }
        let target = try Self.consoleTarget(endpoint, world, session: caller == .nonAdmin ? member : browser,
                                            actor: caller == .nonAdmin ? world.member.recordName : world.root)
        var cookies = browser.cookies
        var headers: [String: String] = [:]
        var fields = target.fields
        fields["csrf"] = browser.csrf
        switch caller {
        case .admin: break
        case .adminNoCSRF: fields["csrf"] = nil
        case .adminWrongCSRF: fields["csrf"] = String(repeating: "0", count: 64)
        case .nonAdmin:
            cookies = member.cookies
            fields["csrf"] = member.csrf
        case .adminPlantedCSRF:
            let stranger = ConsoleClient(server)
            try stranger.get("/console/signin")
            cookies["tandem_csrf"] = stranger.cookies["tandem_csrf"]
            fields["csrf"] = stranger.csrf
        case .adminSameSite:
            headers["Sec-Fetch-Site"] = "same-site"
        case .signedOutSession:
            let other = ConsoleClient(server)
            _ = try other.signIn("root@example.com", "matrix password")
            try other.get("/console/")
            try other.post("/console/signout")
            cookies = ["tandem_console": try #require(other.setCookies.first { $0.hasPrefix("tandem_console=tdc_") }?
                .split(separator: ";").first?.dropFirst("tandem_console=".count).description), "tandem_csrf": browser.cookies["tandem_csrf"] ?? ""]
        case .anonymous: cookies = ["tandem_csrf": browser.cookies["tandem_csrf"] ?? ""]
        }
        let response = endpoint.isAction ? try browser.request("POST", target.path, form: fields, cookies: cookies, headers: headers)
            : try browser.request("GET", target.path, cookies: cookies, headers: headers)
        var outcome = response.json.serverErrorCode ?? "HTTP \(response.status)"
        if response.status == 200 && response.json.serverErrorCode == nil { outcome = "ok" }
        if response.status == 303 { outcome = response.headers["location"] == "/console/signin" ? "signin" : "ok" }
        let want = Self.consoleExpected(endpoint)[ConsoleCaller.allCases.firstIndex(of: caller)!]
        #expect(outcome == want, "\(endpoint) as \(caller): \(response.status) \(response.headers["location"] ?? "") \(response.text.prefix(300))")
        if endpoint.isAction {
            #expect(try target.changed() == (want == "ok"), "\(endpoint) as \(caller): the store \(want == "ok" ? "did not change" : "changed")")
        }
    }
}
