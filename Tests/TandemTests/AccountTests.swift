import Foundation
import Synchronization
import Testing
import Tandem
import TandemTestSupport

/// Through the SDK against a real server: `accountStatus()` (A34), the sign-in helpers over the
/// accounts API (A35) and `accountChanges` (A36).
@Suite("Account status, sign-in helpers and account changes")
struct AccountTests {
    /// Three failed sign-ins per account within 15 minutes, then `THROTTLED`.
    static let server: TestServer = {
        do { return try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "3,50,900"]) } catch { fatalError("\(error)") }
    }()

    static let statusTable: [(TandemError, AccountStatus)] = [
        (TandemError(.notAuthenticated, "", serverErrorCode: "AUTHENTICATION_REQUIRED", httpStatus: 401), .noAccount),
        (TandemError(.sessionExpired, "", serverErrorCode: "AUTHENTICATION_FAILED", httpStatus: 401), .noAccount),
        (TandemError(.sessionRevoked, "", serverErrorCode: "AUTHENTICATION_FAILED", httpStatus: 401), .noAccount),
        (TandemError(.networkUnavailable, "connection refused"), .temporarilyUnavailable),
        (TandemError(.networkFailure, "timed out"), .temporarilyUnavailable),
        (TandemError(.serviceUnavailable, "", serverErrorCode: "TRY_AGAIN_LATER", httpStatus: 503), .temporarilyUnavailable),
        (TandemError(.permissionFailure, "", serverErrorCode: "ACCESS_DENIED", httpStatus: 403), .restricted),
        (TandemError(.internalError, "", serverErrorCode: "INTERNAL_ERROR", httpStatus: 500), .couldNotDetermine),
        (TandemError(.requestRateLimited, "", serverErrorCode: "THROTTLED", httpStatus: 429), .couldNotDetermine),
    ]

    @Test(arguments: statusTable)
    func aFailureMapsToAStatus(failure: TandemError, status: AccountStatus) {
        #expect(AccountStatus(failure: failure) == status)
    }

    @Test func consentRequiredHasItsOwnCode() {
        #expect(TandemError.Code(serverErrorCode: "ACCESS_DENIED", tandemReason: "CONSENT_REQUIRED") == .consentRequired)
        #expect(TandemError.Code(serverErrorCode: "ACCESS_DENIED", tandemReason: nil) == .permissionFailure)
        #expect(TandemError(.consentRequired, "").needsSignIn == false && TandemError(.consentRequired, "").isRetryable == false)
    }

    @Test func accountStatusFollowsTheCredentials() async throws {
        let server = Self.server
        let app = try server.apiToken()
        func container(_ credentials: Credentials) -> Container {
            Container(identifier: TestServer.container, serverURL: server.serverURL, credentials: credentials)
        }
        #expect(try await container(.none).accountStatus() == .noAccount)
        #expect(try await container(.apiToken(app, webAuthToken: nil)).accountStatus() == .noAccount)
        #expect(try await container(.userToken(server.adaToken)).accountStatus() == .available)
        #expect(try await container(.apiToken(app, webAuthToken: "tdu_unknown")).accountStatus() == .noAccount)

        let email = "\(unique("status"))@example.com".lowercased()
        let token = try await server.signUpAndSignIn(email, password: "status quo", apiToken: app)
        let signedIn = container(.apiToken(app, webAuthToken: token))
        let log = AccountChangeLog(signedIn.accountChanges)
        #expect(try await signedIn.accountStatus() == .available)
        #expect(try await server.auth("sessions/revoke", ["all": true], bearer: token).status == 200)
        #expect(try await signedIn.accountStatus() == .noAccount)
        // The refusal accountStatus met is an account change, told once.
        #expect(try await log.waitFor(1) == [.sessionEnded(reason: .revoked)])
        #expect(try await signedIn.accountStatus() == .noAccount)
        #expect(log.changes == [.sessionEnded(reason: .revoked)])
    }

    @Test func aStoppedServerIsTemporarilyUnavailable() async throws {
        let server = try TestServer()
        let container = server.ada
        #expect(try await container.accountStatus() == .available)
        server.kill()
        let started = Date()
        #expect(try await container.accountStatus() == .temporarilyUnavailable)
        #expect(Date().timeIntervalSince(started) < 5, "one attempt, no retries")
        try server.start()
        #expect(try await container.accountStatus() == .available)
    }

    @Test func signUpVerifySignInSaveAndSignOut() async throws {
        let server = Self.server
        let app = try server.apiToken()
        let email = "\(unique("helper"))@example.com".lowercased()
        let reported = Mutex<[Credentials]>([])
        let container = Container(identifier: TestServer.container, serverURL: server.serverURL, credentials: .apiToken(app, webAuthToken: nil),
                                  configuration: Container.Configuration(credentialsChanged: { c in reported.withLock { $0.append(c) } }))
        try await container.signUp(email: email, password: "correct horse", name: "Grace Hopper")
        // Before the email is verified, the account does not exist: the same answer as a wrong password.
        let early = await #expect(throws: TandemError.self) { try await container.signIn(email: email, password: "correct horse", consent: true) }
        #expect(early?.code == .notAuthenticated)
        let bogusLink = await #expect(throws: TandemError.self) { try await container.verifyEmail(token: "not-a-link") }
        #expect(bogusLink?.code == .notAuthenticated)
        try TandemProcess.admin(["user", "verify", email, "--data", server.dataDirectory])

        let noConsent = await #expect(throws: TandemError.self) { try await container.signIn(email: email, password: "correct horse") }
        #expect(noConsent?.code == .consentRequired && noConsent?.serverErrorCode == "ACCESS_DENIED", "\(String(describing: noConsent))")
        #expect(container.credentials == .apiToken(app, webAuthToken: nil))
        let credentials = try await container.signIn(email: email, password: "correct horse", consent: true, device: "test laptop")
        guard case .apiToken(let api, let token?) = credentials else { Issue.record("\(credentials)"); return }
        #expect(api == app && token.hasPrefix("tdu_") && container.credentials == credentials)
        #expect(try await container.accountStatus() == .available)
        var note = Record(recordType: "Note")
        note["title"] = "signed in through the SDK"
        let saved = try await container.privateDatabase.save(note)
        #expect(saved.recordID == note.recordID)

        try await container.signOut()
        #expect(container.credentials == .apiToken(app, webAuthToken: nil))
        #expect(try await container.accountStatus() == .noAccount)
        let refused = await #expect(throws: TandemError.self) {
            try await server.container(apiToken: app, webAuthToken: token).privateDatabase.allRecordZones()
        }
        #expect(refused?.code == .sessionRevoked, "\(String(describing: refused))")
        #expect(reported.withLock { $0 } == [credentials, .apiToken(app, webAuthToken: nil)])
        try await container.signOut()   // no user: nothing to do
        #expect(reported.withLock { $0.count } == 2)
    }

    @Test func wrongPasswordsAreRefusedThenThrottled() async throws {
        let server = Self.server
        let app = try server.apiToken()
        let email = "\(unique("wrong"))@example.com".lowercased()
        _ = try await server.signUpAndSignIn(email, password: "the right one", apiToken: app)
        let container = Container(identifier: TestServer.container, serverURL: server.serverURL, credentials: .none)
        let noApp = await #expect(throws: TandemError.self) { try await container.signIn(email: email, password: "the right one") }
        #expect(noApp?.code == .invalidArguments)
        for _ in 0..<3 {
            let wrong = await #expect(throws: TandemError.self) { try await container.signIn(email: email, password: "a wrong one", apiToken: app) }
            #expect(wrong?.code == .notAuthenticated && wrong?.serverErrorCode == "AUTHENTICATION_FAILED", "\(String(describing: wrong))")
        }
        let started = Date()
        let throttled = await #expect(throws: TandemError.self) { try await container.signIn(email: email, password: "the right one", apiToken: app) }
        #expect(throttled?.code == .requestRateLimited && (throttled?.retryAfterSeconds ?? 0) > 0, "\(String(describing: throttled))")
        #expect(Date().timeIntervalSince(started) < 5, "thrown at once, not retried")
        #expect(container.credentials == .none)
    }

    @Test func accountChangesFollowSignInSwitchAndRevocation() async throws {
        let server = Self.server
        let app = try server.apiToken()
        let grace = "\(unique("grace"))@example.com".lowercased()
        let alan = "\(unique("alan"))@example.com".lowercased()
        let alanToken = try await server.signUpAndSignIn(alan, password: "enigma machine", apiToken: app)
        try await server.container(apiToken: app, webAuthToken: alanToken).signOut()
        #expect(try await server.auth("signup", ["email": grace, "password": "compiler one"], apiToken: app).status == 200)
        try TandemProcess.admin(["user", "verify", grace, "--data", server.dataDirectory])

        let container = Container(identifier: TestServer.container, serverURL: server.serverURL, credentials: .apiToken(app, webAuthToken: nil))
        let log = AccountChangeLog(container.accountChanges)
        try await container.signIn(email: grace, password: "compiler one", consent: true)
        let graceID = try await container.userRecordID()
        #expect(try await log.waitFor(1) == [.signedIn(graceID)])

        // Another person's token, put in by the app (no rotation involved): a switch, once users/current names them.
        let alanAgain = try await server.signIn(alan, password: "enigma machine", apiToken: app)
        container.replaceCredentials(.apiToken(app, webAuthToken: alanAgain))
        let afterSwitch = try await log.waitFor(2)
        guard case .switched(let from, let to) = afterSwitch.last else { Issue.record("\(afterSwitch)"); return }
        #expect(from == graceID && to != graceID)
        #expect(try await container.userRecordID() == to)

        // Revoked elsewhere; the next request finds it.
        #expect(try await server.auth("sessions/revoke", ["all": true], bearer: alanAgain).status == 200)
        let refused = await #expect(throws: TandemError.self) { try await container.privateDatabase.allRecordZones() }
        #expect(refused?.code == .sessionRevoked)
        #expect(try await log.waitFor(3).last == .sessionEnded(reason: .revoked))
        _ = try? await container.privateDatabase.allRecordZones()   // told once per session

        try await container.signIn(email: grace, password: "compiler one")
        try await container.signOut()
        #expect(try await log.waitFor(5) == [.signedIn(graceID), .switched(from: graceID, to: to), .sessionEnded(reason: .revoked),
                                             .signedIn(graceID), .signedOut])
    }
}

/// Collects a container's account changes as they come.
final class AccountChangeLog: Sendable {
    private final class Seen: Sendable { let changes = Mutex<[AccountChange]>([]) }
    private let seen = Seen()
    private let task: Task<Void, Never>

    init(_ stream: AsyncStream<AccountChange>) {
        let seen = self.seen
        task = Task { for await change in stream { seen.changes.withLock { $0.append(change) } } }
    }

    deinit { task.cancel() }

    var changes: [AccountChange] { seen.changes.withLock { $0 } }

    /// The changes once there are at least `count`, waiting up to 5 s.
    func waitFor(_ count: Int) async throws -> [AccountChange] {
        for _ in 0..<100 {
            let now = changes
            if now.count >= count { return now }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        throw TestFailure("waited for \(count) account changes, saw \(changes)")
    }
}
