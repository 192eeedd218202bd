import Foundation
import Testing
import TandemCore

/// Refused sessions say why in `tandemReason` (decisions A12), and a web auth token past half
/// its idle limit is replaced by one sent in `X-Apple-CloudKit-Web-Auth-Token` (A13), over HTTP.
@Suite("Session refusals and rotation")
struct SessionRotationTests {
    /// A 10-second idle limit: tokens rotate after 5 s of age and expire after 10 s unused (wide
    /// enough that a loaded machine's slow requests do not cross a limit the test does not mean to).
    static let lazy = LazyAccountServer(TestServer.cheapHash + ["--session-idle", "10"])
    static let header = "x-apple-cloudkit-web-auth-token"

    func current(_ server: TestServer, _ token: String) throws -> TestServer.Response {
        try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(token))
    }

    @Test func revokedAndExpiredSessionsAreToldApartByTandemReason() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("why"))@example.com".lowercased()
        try server.signUpVerified(email, password: "tell me why", apiToken: app)
        let revoked = try server.signIn(email, password: "tell me why", apiToken: app)
        let dozing = try server.signIn(email, password: "tell me why", apiToken: app)
        #expect(try server.auth("signout", [:], bearer: revoked).status == 200)
        let answer = try current(server, revoked)
        #expect(answer.status == 401 && answer.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(answer.text)")
        #expect(answer.json["tandemReason"] == "SESSION_REVOKED" && answer.json["uuid"]?.stringValue != nil, "\(answer.text)")
        Thread.sleep(forTimeInterval: 10.3)
        let expired = try current(server, dozing)
        #expect(expired.status == 401 && expired.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(expired.text)")
        #expect(expired.json["tandemReason"] == "SESSION_EXPIRED", "\(expired.text)")
        // A token the server never issued has no session to describe.
        let unknown = try current(server, "tdu_nonsense")
        #expect(unknown.json.serverErrorCode == "AUTHENTICATION_FAILED" && unknown.json["tandemReason"] == nil, "\(unknown.text)")
        // The accounts API answers the same way.
        let viaAuth = try server.auth("account", bearer: revoked)
        #expect(viaAuth.json["tandemReason"] == "SESSION_REVOKED", "\(viaAuth.text)")
    }

    @Test func aTokenPastHalfItsIdleLimitIsReplacedOnceAndTheOldOneHasAGrace() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("rotate"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "spin around", apiToken: app)
        let old = try server.signIn(email, password: "spin around", apiToken: app, device: "phone")
        let young = try current(server, old)
        #expect(young.status == 200 && young.headers[Self.header] == nil)
        Thread.sleep(forTimeInterval: 5.3)
        // An error answer carries the new token too: the rotation has happened either way.
        let failed = try server.request("POST", server.databaseURL("records/query"), body: Data("{}".utf8), token: .some(old))
        #expect(failed.json.serverErrorCode == "BAD_REQUEST", "\(failed.text)")
        let new = try #require(failed.headers[Self.header], "\(failed.headers)")
        #expect(new.hasPrefix("tdu_") && new != old)
        // Only one successor: the old token keeps working in its grace period, without a header.
        let again = try current(server, old)
        #expect(again.status == 200 && again.headers[Self.header] == nil && again.json["userRecordName"]?.stringValue == user)
        let fresh = try current(server, new)
        #expect(fresh.status == 200 && fresh.headers[Self.header] == nil && fresh.json["userRecordName"]?.stringValue == user)
        // The session list shows the session once, under its new token, with its device.
        let sessions = try #require(try server.auth("sessions", bearer: new).json["sessions"]?.arrayValue)
        #expect(sessions.count == 1 && sessions.first?["device"] == "phone" && sessions.first?["current"] == true, "\(sessions)")
        // Signing out with the new token ends the old one too.
        #expect(try server.auth("signout", [:], bearer: new).status == 200)
        #expect(try current(server, old).json["tandemReason"] == "SESSION_REVOKED")
        #expect(try current(server, new).json["tandemReason"] == "SESSION_REVOKED")
    }

    /// QA: a password-less account may be deleted only within 10 minutes of signing in (A15), but
    /// each rotation's new token counted as a fresh sign-in, so a token kept in use stayed fresh
    /// for ever. The check reads the session's first token.
    @Test func aRotatedTokenIsNotAFreshSignInForAccountDeletion() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("stale"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "old session", apiToken: app)
        let old = try server.signIn(email, password: "old session", apiToken: app)
        // The session began 11 minutes ago and was last used just now; then the account loses its
        // password (as an account made with a passkey or OpenID Connect has none).
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try server.sqlite("""
            UPDATE tokens SET created_at = created_at - 660000, last_used_at = \(now)
            WHERE user_record_name = '\(user)';
            DELETE FROM sign_in_methods WHERE user_record_name = '\(user)';
            """)
        let rotated = try current(server, old)
        let new = try #require(rotated.headers[Self.header], "\(rotated.status) \(rotated.text)")
        let refused = try server.auth("account/delete", [:], apiToken: app, bearer: new)
        #expect(refused.json.serverErrorCode == "ACCESS_DENIED" && refused.json["reason"]?.stringValue?.contains("sign in again") == true,
                "\(refused.status) \(refused.text)")
        #expect(try server.currentUser(new) == user, "the account is still there")
    }

    @Test func cliMadeUserTokensAreNeverRotated() throws {
        let (server, _) = try Self.lazy.get()
        let answer = try server.request("GET", server.databaseURL("users/current", database: "public"))
        Thread.sleep(forTimeInterval: 5.3)
        let later = try server.request("GET", server.databaseURL("users/current", database: "public"))
        #expect(answer.status == 200 && later.status == 200 && later.headers[Self.header] == nil)
    }
}
