import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// OpenID Connect against a real provider on loopback (oidc-provider-mock, Tests/OIDC): the token
/// exchange (`POST /auth/1/{container}/token/exchange`) links by (issuer, sub) and refuses every
/// bad token without creating anything; the sign-in page's provider flow (code + PKCE) in
/// headless Chromium ends with `{ckSession}` at the app page (decisions A18–A23).
// Serialized: `badTokensAreRefusedAndCreateNothing` counts every user, sign-in method and token of the
// shared server, which the other tests here create in parallel.
@Suite(.serialized) struct OIDCSignInTests {
    static let audience = "tandem-backend"
    static let clientID = "tandem-web"

    final class World: @unchecked Sendable {
        let provider: OIDCProvider
        let server: TestServer
        let app: String

        init() throws {
            provider = try OIDCProvider()
            server = try TestServer(extraArguments: TestServer.cheapHash + [
                "--webhook-allow", "127.0.0.0/8",
                "--oidc-exchange", "\(TestServer.container),\(provider.issuer),\(OIDCSignInTests.audience)",
                "--oidc-provider", "\(TestServer.container),Mock,\(provider.issuer),\(OIDCSignInTests.clientID),client-secret",
            ])
            app = try server.apiToken(origins: ["https://app.example"])
        }
    }

    static let lock = NSLock()
    nonisolated(unsafe) static var shared: World?

    static func world() throws -> World {
        lock.lock()
        defer { lock.unlock() }
        if let shared { return shared }
        let made = try World()
        shared = made
        return made
    }

    func exchange(_ world: World, _ token: String, apiToken: String? = nil) throws -> TestServer.Response {
        try world.server.auth("token/exchange", ["idToken": .string(token)], apiToken: apiToken ?? world.app)
    }

    @Test func anExchangedTokenSignsInAndLinksByIssuerAndSubject() throws {
        let world = try Self.world()
        let sub = unique("alice")
        let email = "\(sub)@example.com".lowercased()
        let first = try exchange(world, try world.provider.mint(sub: sub, clientID: Self.audience, claims: ["email": email, "email_verified": true]))
        #expect(first.status == 200, "\(first.text)")
        let user = try #require(first.json["userRecordName"]?.stringValue)
        let token = try #require(first.json["ckWebAuthToken"]?.stringValue)
        #expect(try world.server.currentUser(token) == user)
        let subject = "\(world.provider.issuer)|\(sub)"
        #expect(try world.server.sqlite("SELECT user_record_name FROM sign_in_methods WHERE kind = 'oidc' AND subject = '\(subject)'") == user)
        #expect(try world.server.sqlite("SELECT email || ' ' || email_verified FROM users WHERE record_name = '\(user)'") == "\(email) 1")
        #expect(try world.server.sqlite("SELECT count(*) FROM container_consents WHERE user_record_name = '\(user)'") == "1")
        // A later token of the same identity signs in to the same account, even with another email.
        let again = try exchange(world, try world.provider.mint(sub: sub, clientID: Self.audience, claims: ["email": "changed-\(email)", "email_verified": true]))
        #expect(again.json["userRecordName"]?.stringValue == user, "\(again.text)")
        #expect(try world.server.sqlite("SELECT count(*) FROM users WHERE email IN ('\(email)', 'changed-\(email)')") == "1")
    }

    @Test func aVerifiedEmailLinksToItsAccountAndAnUnverifiedOneNever() throws {
        let world = try Self.world()
        let email = "\(unique("bob"))@example.com".lowercased()
        let bob = try world.server.signUpVerified(email, password: "bob password", apiToken: world.app)
        // Unverified: a new account without the email; Bob's account is untouched.
        let stranger = try exchange(world, try world.provider.mint(sub: unique("mallory"), clientID: Self.audience,
                                                                    claims: ["email": email, "email_verified": false]))
        #expect(stranger.status == 200, "\(stranger.text)")
        let other = try #require(stranger.json["userRecordName"]?.stringValue)
        #expect(other != bob)
        #expect(try world.server.sqlite("SELECT coalesce(email, '-') FROM users WHERE record_name = '\(other)'") == "-")
        #expect(try world.server.sqlite("SELECT count(*) FROM sign_in_methods WHERE user_record_name = '\(bob)'") == "1")
        // Verified by the provider: linked to Bob's account, which keeps its password.
        let linked = try exchange(world, try world.provider.mint(sub: unique("bob-at-idp"), clientID: Self.audience,
                                                                  claims: ["email": email, "email_verified": true]))
        #expect(linked.json["userRecordName"]?.stringValue == bob, "\(linked.text)")
        #expect(try world.server.sqlite("SELECT kind FROM sign_in_methods WHERE user_record_name = '\(bob)' ORDER BY kind") == "oidc\npassword")
    }

    /// Each bad token is AUTHENTICATION_FAILED (401) with its reason, and nothing is created.
    @Test func badTokensAreRefusedAndCreateNothing() throws {
        let world = try Self.world()
        let provider = world.provider
        func fresh(_ claims: [String: Any] = [:]) throws -> String {
            try provider.mint(sub: unique("bad"), clientID: Self.audience, claims: ["email": "\(unique("bad"))@example.com", "email_verified": true]
                                .merging(claims) { $1 })
        }
        func part(_ token: String, _ index: Int) -> String { String(token.split(separator: ".")[index]) }
        let good = try fresh()
        var tampered = Array(part(good, 2))
        tampered[10] = tampered[10] == "A" ? "B" : "A"
        let forgedPayload = Data(#"{"iss":"\#(provider.issuer)","aud":"\#(Self.audience)","sub":"root","iat":1,"exp":99999999999}"#.utf8)
            .base64EncodedString().replacingOccurrences(of: "=", with: "").replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let cases: [(String, String, String)] = [
            ("a tampered signature", part(good, 0) + "." + part(good, 1) + "." + String(tampered), "signature"),
            ("a payload swapped under a good signature", part(good, 0) + "." + forgedPayload + "." + part(good, 2), "signature"),
            ("another audience", try fresh(["aud": "someone-else"]), "audience"),
            ("an expired token", try fresh(["exp": 1_000_000_000]), "expired"),
            ("alg none", "eyJhbGciOiJub25lIn0." + part(good, 1) + ".", "alg: none"),
            ("an unknown kid", try provider.resignWithUnknownKey(try fresh()), "not-in-jwks"),
            ("another issuer", try fresh(["iss": "https://issuer.example"]), "not trusted"),
        ]
        let counts = "SELECT (SELECT count(*) FROM users) || ' ' || (SELECT count(*) FROM sign_in_methods) || ' ' || (SELECT count(*) FROM tokens)"
        let before = try world.server.sqlite(counts)
        for (label, token, reason) in cases {
            let response = try exchange(world, token)
            #expect(response.status == 401 && response.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(label): \(response.status) \(response.text)")
            #expect(response.json["reason"]?.stringValue?.contains(reason) == true, "\(label): \(response.text)")
        }
        #expect(try world.server.sqlite(counts) == before)
        // The good token still works: the refusals were about the tokens, not the issuer.
        #expect(try exchange(world, good).status == 200)
    }

    @Test func theExchangeNeedsTheContainersAPITokenAndATrustedIssuer() throws {
        let world = try Self.world()
        let token = try world.provider.mint(sub: unique("api"), clientID: Self.audience)
        let anonymous = try world.server.auth("token/exchange", ["idToken": .string(token)])
        #expect(anonymous.json.serverErrorCode == "AUTHENTICATION_FAILED")
        _ = try TestServer.admin(["container", "create", "iCloud.com.example.untrusting", "--data", world.server.dataDirectory])
        let otherApp = try world.server.apiToken(container: "iCloud.com.example.untrusting")
        let untrusting = try world.server.auth("token/exchange", ["idToken": .string(token)], apiToken: otherApp, container: "iCloud.com.example.untrusting")
        #expect(untrusting.json.serverErrorCode == "AUTHENTICATION_FAILED" && untrusting.text.contains("trusts no identity provider"), "\(untrusting.text)")
        let notJWT = try exchange(world, "not a token")
        #expect(notJWT.status == 400 && notJWT.json.serverErrorCode == "BAD_REQUEST", "\(notJWT.text)")
        let get = try world.server.auth("token/exchange", apiToken: world.app)
        #expect(get.status == 405, "\(get.status)")
    }

    /// A token that is not shaped as an ID token is malformed input: `BAD_REQUEST` saying what
    /// is wrong, not `AUTHENTICATION_FAILED` (A41; QA: a header without `alg` or a payload without
    /// `iss` answered 401). Nothing is created and nothing counts against the rate limits.
    @Test(arguments: [
        ("no dots", "not a token", "not a JWT"),
        ("two parts", "e30.e30", "three parts"),
        ("a part that is not base64url", "e30.e30.!!", "base64url"),
        ("a header that is not JSON", OIDCSignInTests.b64("not json") + "." + OIDCSignInTests.b64(#"{"iss":"x","sub":"y"}"#) + ".c2ln", "header is not a JSON object"),
        ("a header without alg", OIDCSignInTests.b64(#"{"typ":"JWT"}"#) + "." + OIDCSignInTests.b64(#"{"iss":"x","sub":"y"}"#) + ".c2ln", "no 'alg'"),
        ("alg that is not a string", OIDCSignInTests.b64(#"{"alg":256}"#) + "." + OIDCSignInTests.b64(#"{"iss":"x","sub":"y"}"#) + ".c2ln", "no 'alg'"),
        ("kid that is not a string", OIDCSignInTests.b64(#"{"alg":"RS256","kid":7}"#) + "." + OIDCSignInTests.b64(#"{"iss":"x","sub":"y"}"#) + ".c2ln", "'kid'"),
        ("a payload without iss", OIDCSignInTests.b64(#"{"alg":"RS256"}"#) + "." + OIDCSignInTests.b64(#"{"sub":"y"}"#) + ".c2ln", "no 'iss'"),
    ])
    func aMalformedIDTokenIsABadRequestWithItsReason(label: String, token: String, reason: String) throws {
        let world = try Self.world()
        let response = try exchange(world, token)
        #expect(response.status == 400 && response.json.serverErrorCode == "BAD_REQUEST", "\(label): \(response.status) \(response.text)")
        #expect(response.json["reason"]?.stringValue?.contains(reason) == true, "\(label): \(response.text)")
    }

    /// base64url without padding (RFC 7515 §2).
    static func b64(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    @Test func withoutTheLoopbackOpeningTheIssuerIsNotFetched() throws {
        let provider = try OIDCProvider()
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--oidc-exchange", "\(TestServer.container),\(provider.issuer),\(Self.audience)"])
        let app = try server.apiToken()
        let before = try server.sqlite("SELECT count(*) FROM users")
        let response = try server.auth("token/exchange", ["idToken": .string(try provider.mint(sub: "x", clientID: Self.audience))], apiToken: app)
        #expect(response.json.serverErrorCode == "TRY_AGAIN_LATER" && response.text.contains("loopback"), "\(response.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users") == before)
    }

    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/oidc_flow.py").path
    }

    @Test(.timeLimit(.minutes(5)))
    func theProviderButtonCompletesCloudKitJSFlowInHeadlessChromium() throws {
        let world = try Self.world()
        let run = try LandingPageBrowserTests.python([
            Self.driver, "--server", world.server.baseURL, "--container", TestServer.container, "--sub", unique("carol"),
            "--tandem", TestServer.binary, "--data", world.server.dataDirectory,
        ], timeout: 240)
        #expect(run.status == 0, "oidc_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
    }
}
