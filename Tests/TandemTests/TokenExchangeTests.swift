import Foundation
import Synchronization
import Testing
import Tandem
import TandemTestSupport

/// `Container.signIn(exchanging:)` through the SDK against a real server that trusts a real
/// OpenID Connect provider on loopback (oidc-provider-mock, `OIDCProvider`) for the test
/// container (decisions A22, A35). Serialized: while one request fetches the issuer's keys, a
/// concurrent one is answered `TRY_AGAIN_LATER` at once (A19).
@Suite("Token exchange through the SDK", .serialized)
struct TokenExchangeTests {
    static let audience = "sdk-backend"
    /// Trusted for the container, but nothing listens there: discovery fails.
    static let unreachableIssuer = "http://127.0.0.1:9"

    final class World: Sendable {
        let provider: OIDCProvider
        let server: TestServer
        let app: String

        init() throws {
            provider = try OIDCProvider()
            server = try TestServer(extraArguments: TestServer.cheapHash + [
                "--sign-in-attempts", "3,50,900", "--webhook-allow", "127.0.0.0/8",
                "--oidc-exchange", "\(TestServer.container),\(provider.issuer),\(TokenExchangeTests.audience)",
                "--oidc-exchange", "\(TestServer.container),\(TokenExchangeTests.unreachableIssuer),\(TokenExchangeTests.audience)",
            ])
            app = try server.apiToken()
        }
    }

    static let world: World = {
        do { return try World() } catch { fatalError("\(error)") }
    }()

    @Test func anExchangedTokenSignsTheContainerIn() async throws {
        let world = Self.world
        let reported = Mutex<[Credentials]>([])
        let container = Container(identifier: TestServer.container, serverURL: world.server.serverURL, credentials: .apiToken(world.app, webAuthToken: nil),
                                  configuration: Container.Configuration(credentialsChanged: { c in reported.withLock { $0.append(c) } }))
        let log = AccountChangeLog(container.accountChanges)
        let sub = unique("backend-user")
        let idToken = try world.provider.mint(sub: sub, clientID: Self.audience,
                                              claims: ["email": "\(sub)@example.com".lowercased(), "email_verified": true])

        let credentials = try await container.signIn(exchanging: idToken, device: "backend job")
        guard case .apiToken(let api, let token?) = credentials else { Issue.record("\(credentials)"); return }
        #expect(api == world.app && token.hasPrefix("tdu_") && container.credentials == credentials)
        #expect(reported.withLock { $0 } == [credentials])
        let user = try await container.userRecordID()
        #expect(try await log.waitFor(1) == [.signedIn(user)])
        #expect(try await container.accountStatus() == .available)
        var note = Record(recordType: "Note")
        note["title"] = "written after a token exchange"
        #expect(try await container.privateDatabase.save(note).recordID == note.recordID)

        // The same identity again is the same person: no account change.
        try await container.signIn(exchanging: try world.provider.mint(sub: sub, clientID: Self.audience))
        #expect(try await container.userRecordID() == user)
        try await container.signOut()
        #expect(try await log.waitFor(2) == [.signedIn(user), .signedOut])
    }

    @Test func refusedTokensMapToTandemErrorsAndKeepTheCredentials() async throws {
        let world = Self.world
        let container = Container(identifier: TestServer.container, serverURL: world.server.serverURL, credentials: .apiToken(world.app, webAuthToken: nil))
        let sub = unique("refused")
        func refusal(_ idToken: String, apiToken: String? = nil) async -> TandemError? {
            await #expect(throws: TandemError.self) { try await container.signIn(exchanging: idToken, apiToken: apiToken) }
        }

        let wrongAudience = await refusal(try world.provider.mint(sub: sub, clientID: "someone-else"))
        #expect(wrongAudience?.code == .notAuthenticated && wrongAudience?.serverErrorCode == "AUTHENTICATION_FAILED", "\(String(describing: wrongAudience))")
        #expect(wrongAudience?.message.contains("audience") == true, "\(String(describing: wrongAudience))")
        let unknownKey = await refusal(try world.provider.resignWithUnknownKey(try world.provider.mint(sub: sub, clientID: Self.audience)))
        #expect(unknownKey?.code == .notAuthenticated, "\(String(describing: unknownKey))")
        let notJWT = await refusal("not a token")
        #expect(notJWT?.code == .invalidArguments, "\(String(describing: notJWT))")
        let wrongApp = await refusal(try world.provider.mint(sub: sub, clientID: Self.audience), apiToken: "tda_not-an-api-token")
        #expect(wrongApp?.code == .notAuthenticated, "\(String(describing: wrongApp))")
        let noApp = await #expect(throws: TandemError.self) {
            try await Container(identifier: TestServer.container, serverURL: world.server.serverURL, credentials: .none)
                .signIn(exchanging: try world.provider.mint(sub: sub, clientID: Self.audience))
        }
        #expect(noApp?.code == .invalidArguments)

        // Three failures of one identity (wrong audience, unknown key, wrong audience): then THROTTLED, thrown at once.
        _ = await refusal(try world.provider.mint(sub: sub, clientID: "someone-else"))
        let started = Date()
        let throttled = await refusal(try world.provider.mint(sub: sub, clientID: Self.audience))
        #expect(throttled?.code == .requestRateLimited && (throttled?.retryAfterSeconds ?? 0) > 0, "\(String(describing: throttled))")
        #expect(Date().timeIntervalSince(started) < 5, "one attempt, not retried")

        // A trusted issuer that cannot be reached: the server cannot check the token now.
        let unreachable = await refusal(try world.provider.mint(sub: unique("offline"), clientID: Self.audience,
                                                                claims: ["iss": Self.unreachableIssuer]))
        #expect(unreachable?.code == .serviceUnavailable && unreachable?.serverErrorCode == "TRY_AGAIN_LATER", "\(String(describing: unreachable))")
        #expect(container.credentials == .apiToken(world.app, webAuthToken: nil))
    }
}
