import Foundation
import Synchronization
import Testing
import Tandem

/// Through the SDK against a real server: revoked and expired sessions are distinct codes
/// (decisions A12), and a rotated web auth token is adopted from the response header (A13).
@Suite("Session errors and token rotation")
struct SessionErrorTests {
    /// Tokens rotate after 5 s of age and expire after 10 s unused (wide enough for a loaded
    /// machine: at 3 s, sign-in and the first request alone sometimes outlasted the idle limit).
    static let server: TestServer = {
        do { return try TestServer(extraArguments: TestServer.cheapHash + ["--session-idle", "10"]) } catch { fatalError("\(error)") }
    }()

    @Test func revokedAndExpiredSessionsHaveTheirOwnCodes() async throws {
        let server = Self.server
        let app = try server.apiToken()
        let email = "\(unique("sdk-why"))@example.com".lowercased()
        let revoked = try await server.signUpAndSignIn(email, password: "revoke me", apiToken: app)
        let dozing = try await server.signIn(email, password: "revoke me", apiToken: app)
        let signedIn = server.container(apiToken: app, webAuthToken: revoked)
        _ = try await signedIn.userRecordID()
        let out = try await server.auth("signout", [:], bearer: revoked)
        #expect(out.status == 200)
        let revokedError = await #expect(throws: TandemError.self) { try await signedIn.userRecordID() }
        #expect(revokedError?.code == .sessionRevoked && revokedError?.needsSignIn == true, "\(String(describing: revokedError))")
        #expect(revokedError?.serverErrorCode == "AUTHENTICATION_FAILED" && revokedError?.httpStatus == 401)

        try await Task.sleep(nanoseconds: 10_300_000_000)
        let expiredError = await #expect(throws: TandemError.self) {
            try await server.container(apiToken: app, webAuthToken: dozing).privateDatabase.allRecordZones()
        }
        #expect(expiredError?.code == .sessionExpired && expiredError?.needsSignIn == true, "\(String(describing: expiredError))")

        let unknown = await #expect(throws: TandemError.self) { try await server.container(apiToken: app, webAuthToken: "tdu_x").userRecordID() }
        #expect(unknown?.code == .notAuthenticated && unknown?.needsSignIn == true)
        #expect(TandemError(.permissionFailure, "").needsSignIn == false)
    }

    @Test func aRotatedTokenIsAdoptedAndReported() async throws {
        let server = Self.server
        let app = try server.apiToken()
        let email = "\(unique("sdk-rotate"))@example.com".lowercased()
        let first = try await server.signUpAndSignIn(email, password: "spin me round", apiToken: app)
        let reported = Mutex<[Credentials]>([])
        let container = server.container(apiToken: app, webAuthToken: first) { credentials in reported.withLock { $0.append(credentials) } }
        let me = try await container.userRecordID()
        #expect(container.credentials == .apiToken(app, webAuthToken: first))
        try await Task.sleep(nanoseconds: 5_300_000_000)
        #expect(try await container.userRecordID() == me)
        guard case .apiToken(let api, let second?) = container.credentials else { Issue.record("\(container.credentials)"); return }
        #expect(api == app && second != first && second.hasPrefix("tdu_"))
        #expect(reported.withLock { $0 } == [.apiToken(app, webAuthToken: second)])
        // The adopted token is the session now; the old one still works in its grace period.
        #expect(try await server.container(apiToken: app, webAuthToken: second).userRecordID() == me)
        #expect(try await server.container(apiToken: app, webAuthToken: first).userRecordID() == me)
        // An app that signs in again replaces the credentials itself.
        let third = try await server.signIn(email, password: "spin me round", apiToken: app)
        container.replaceCredentials(.apiToken(app, webAuthToken: third))
        _ = try await server.auth("sessions/revoke", ["all": true], bearer: third)
        let error = await #expect(throws: TandemError.self) { try await container.userRecordID() }
        #expect(error?.code == .sessionRevoked)
    }
}
