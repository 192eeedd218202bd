import Foundation
import Testing
import TandemCore

/// Sessions (web auth tokens): listed per user with device and times, revoked one by one or all
/// at once, signing out revokes, and idle and absolute limits expire them (issue 16, A6); the
/// same through `tandem token list|revoke` and `tandem user list|show`.
@Suite("Sessions")
struct SessionTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    @Test func sessionsAreListedAndRevokedOneByOneOrAllAtOnce() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("multi"))@example.com".lowercased()
        try server.signUpVerified(email, password: "many devices", apiToken: app)
        let phone = try server.signIn(email, password: "many devices", apiToken: app, device: "phone")
        let laptop = try server.signIn(email, password: "many devices", apiToken: app, device: "laptop")
        let tablet = try server.signIn(email, password: "many devices", apiToken: app, device: "tablet")
        let listed = try server.auth("sessions", bearer: laptop)
        let sessions = try #require(listed.json["sessions"]?.arrayValue, "\(listed.text)")
        #expect(Set(sessions.compactMap { $0["device"]?.stringValue }) == ["phone", "laptop", "tablet"])
        #expect(sessions.filter { $0["current"] == true }.map { $0["device"] } == ["laptop"])
        for session in sessions {
            #expect(session["createdAt"]?.int64Value != nil && session["lastUsedAt"]?.int64Value != nil && session["expiresAt"]?.int64Value != nil)
            #expect(session["container"]?.stringValue == TestServer.container)
        }
        // Revoke the phone's session from the laptop: the phone is out at once, the others stay.
        let phoneID = try #require(sessions.first { $0["device"] == "phone" }?["sessionID"]?.stringValue)
        let revoked = try server.auth("sessions/revoke", ["sessionID": .string(phoneID)], bearer: laptop)
        #expect(revoked.json["revoked"] == 1, "\(revoked.text)")
        let refused = try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(phone))
        #expect(refused.json.serverErrorCode == "AUTHENTICATION_FAILED" && refused.json["reason"]?.stringValue?.contains("revoked") == true,
                "\(refused.text)")
        #expect(try server.currentUser(laptop).hasPrefix("_") && server.currentUser(tablet).hasPrefix("_"))
        // Unknown or someone else's session ID: NOT_FOUND; malformed: BAD_REQUEST.
        #expect(try server.auth("sessions/revoke", ["sessionID": "0123456789abcdef"], bearer: laptop).json.serverErrorCode == "NOT_FOUND")
        #expect(try server.auth("sessions/revoke", ["sessionID": "nope"], bearer: laptop).json.serverErrorCode == "BAD_REQUEST")
        #expect(try server.auth("sessions/revoke", [:], bearer: laptop).json.serverErrorCode == "BAD_REQUEST")
        // All at once.
        let all = try server.auth("sessions/revoke", ["all": true], bearer: tablet)
        #expect(all.json["revoked"] == 2, "\(all.text)")
        #expect(try server.currentUser(laptop) == "AUTHENTICATION_FAILED" && server.currentUser(tablet) == "AUTHENTICATION_FAILED")
    }

    @Test func signingOutRevokesTheTokenAtOnce() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("leaver"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "goodbye now", apiToken: app)
        let token = try server.signIn(email, password: "goodbye now", apiToken: app)
        #expect(try server.currentUser(token) == user)   // now cached by the server
        let out = try server.auth("signout", [:], bearer: token)
        #expect(out.status == 200 && out.json["revoked"] == 1, "\(out.text)")
        // Every worker thread must refuse it now, not after its cache expires.
        for _ in 0..<20 { #expect(try server.currentUser(token) == "AUTHENTICATION_FAILED") }
        #expect(try server.auth("signout", [:], bearer: token).json.serverErrorCode == "AUTHENTICATION_FAILED")
    }

    @Test func idleAndAbsoluteLimitsExpireSessions() throws {
        let idle = try TestServer(extraArguments: TestServer.cheapHash + ["--session-idle", "2"])
        let idleApp = try idle.apiToken()
        let email = "\(unique("idle"))@example.com".lowercased()
        try idle.signUpVerified(email, password: "sleepy head", apiToken: idleApp)
        let kept = try idle.signIn(email, password: "sleepy head", apiToken: idleApp)
        let dozing = try idle.signIn(email, password: "sleepy head", apiToken: idleApp)
        // Used every 0.7 s, a token stays alive past the 2-second idle limit; one left alone expires.
        for _ in 0..<5 {
            #expect(try idle.currentUser(kept).hasPrefix("_"))
            Thread.sleep(forTimeInterval: 0.7)
        }
        let expired = try idle.request("GET", idle.databaseURL("users/current", database: "public"), token: .some(dozing))
        #expect(expired.json.serverErrorCode == "AUTHENTICATION_FAILED" && expired.json["reason"]?.stringValue?.contains("idle") == true,
                "\(expired.text)")
        #expect(try idle.currentUser(kept).hasPrefix("_"))

        let short = try TestServer(extraArguments: TestServer.cheapHash + ["--session-lifetime", "2"])
        let shortApp = try short.apiToken()
        try short.signUpVerified(email, password: "sleepy head", apiToken: shortApp)
        let token = try short.signIn(email, password: "sleepy head", apiToken: shortApp)
        for _ in 0..<3 {
            #expect(try short.currentUser(token).hasPrefix("_"))
            Thread.sleep(forTimeInterval: 0.8)
        }
        let over = try short.request("GET", short.databaseURL("users/current", database: "public"), token: .some(token))
        #expect(over.json.serverErrorCode == "AUTHENTICATION_FAILED" && over.json["reason"]?.stringValue?.contains("expired") == true, "\(over.text)")
    }

    @Test func cliListsAndRevokesSessionsAndShowsUsers() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("cli"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "command line", apiToken: app, name: "Cli User")
        let token = try server.signIn(email, password: "command line", apiToken: app, device: "terminal")
        let list = try runTandem(["token", "list", "--user", email, "--data", server.dataDirectory])
        #expect(list.status == 0 && list.output.contains("\tdevice=terminal") && list.output.contains(TestServer.container), "\(list.output)")
        let users = try runTandem(["user", "list", "--data", server.dataDirectory])
        #expect(users.output.contains("\(user)\t\(email)\tverified\tCli User"), "\(users.output)")
        let shown = try runTandem(["user", "show", email, "--data", server.dataDirectory])
        #expect(shown.output.contains("sign-in methods: password") && shown.output.contains("sessions: 1"), "\(shown.output)")
        let revoke = try runTandem(["token", "revoke", "--user", email, "--all", "--data", server.dataDirectory])
        #expect(revoke.status == 0 && revoke.output.contains("revoked 1 session"), "\(revoke.output)")
        // Another process revoked it: the server's cache may keep it for up to 30 s (A6), then it is refused.
        let deadline = Date().addingTimeInterval(40)
        while try server.currentUser(token) != "AUTHENTICATION_FAILED" && Date() < deadline { Thread.sleep(forTimeInterval: 1) }
        #expect(try server.currentUser(token) == "AUTHENTICATION_FAILED")
        let bad = try runTandem(["token", "revoke", "--user", email, "--data", server.dataDirectory])
        #expect(bad.status == 64)
        let unknown = try runTandem(["user", "verify", "\(unique("ghost"))@example.com", "--data", server.dataDirectory])
        #expect(unknown.status == 1 && unknown.error.contains("no user or pending sign-up"), "\(unknown.error)")
    }
}
