import Foundation
import Testing
import TandemCore

/// Email-and-password accounts end to end against a real server (issue 16): sign-up creates
/// nothing until the address is proven, sign-in issues a web auth token bound to its container
/// after per-container consent, answers never tell known emails from unknown ones, bad input is
/// a CloudKit error, brute force is throttled, and Argon2id parameters upgrade at sign-in.
@Suite("Password sign-in")
struct PasswordSignInTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    @Test func signUpVerifyConsentAndSignInGiveATokenForThatContainerOnly() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("grace"))@example.com".lowercased()
        let signUp = try server.auth("signup", ["email": .string(email), "password": "correct horse", "name": "Grace Hopper"], apiToken: app)
        #expect(signUp.status == 200 && signUp.json["status"] == "CHECK_EMAIL", "\(signUp.text)")
        // Nothing exists until the address is proven.
        let early = try server.auth("signin", ["email": .string(email), "password": "correct horse", "consent": true], apiToken: app)
        #expect(early.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(early.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = '\(email)'") == "0")

        let verified = try TestServer.admin(["user", "verify", email, "--data", server.dataDirectory])
        #expect(verified.contains("\tverified\tGrace Hopper"), "\(verified)")

        // First sign-in to the container: consent first, nothing issued without it.
        let noConsent = try server.auth("signin", ["email": .string(email), "password": "correct horse"], apiToken: app)
        #expect(noConsent.status == 403 && noConsent.json.serverErrorCode == "ACCESS_DENIED"
                && noConsent.json["tandemReason"]?.stringValue == "CONSENT_REQUIRED", "\(noConsent.text)")
        #expect(try server.sqlite("SELECT count(*) FROM tokens t JOIN users u ON u.record_name = t.user_record_name WHERE u.email = '\(email)'") == "0")
        let signedIn = try server.auth("signin", ["email": .string(email.uppercased()), "password": "correct horse", "consent": true,
                                                  "device": "Grace's laptop"], apiToken: app)
        let token = try #require(signedIn.json["ckWebAuthToken"]?.stringValue, "\(signedIn.text)")
        let user = try #require(signedIn.json["userRecordName"]?.stringValue)
        #expect(signedIn.json["sessionID"]?.stringValue?.count == 16)
        #expect(try server.currentUser(token) == user)
        // Consent is remembered.
        let again = try server.auth("signin", ["email": .string(email), "password": "correct horse"], apiToken: app)
        #expect(again.json["ckWebAuthToken"]?.stringValue != nil, "\(again.text)")
        // CloudKit JS's way: ckAPIToken with ckWebAuthToken in the query.
        let query = "ckAPIToken=\(app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&ckWebAuthToken=\(token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        let viaQuery = try server.request("GET", server.databaseURL("users/current", database: "public") + "?" + query, token: .some(nil))
        #expect(viaQuery.json["userRecordName"]?.stringValue == user, "\(viaQuery.text)")
        // A web auth token works only in the container it was issued for.
        _ = try TestServer.admin(["container", "create", "iCloud.com.example.other", "--data", server.dataDirectory])
        #expect(try server.currentUser(token, container: "iCloud.com.example.other") == "AUTHENTICATION_FAILED")
        let account = try server.auth("account", bearer: token)
        #expect(account.json["email"]?.stringValue == email && account.json["emailVerified"] == true && account.json["displayName"] == "Grace Hopper",
                "\(account.text) \(email)")
    }

    @Test func signUpAnswersAlikeForKnownAndUnknownEmailsAndCannotTakeOverAnAccount() throws {
        let (server, app) = try Self.lazy.get()
        // ada@example.com exists (made by the test server); a sign-up for it must look like any other.
        let known = try server.auth("signup", ["email": "ada@example.com", "password": "attacker's choice"], apiToken: app)
        let unknown = try server.auth("signup", ["email": .string("\(unique("new"))@example.com"), "password": "attacker's choice"], apiToken: app)
        #expect(known.status == unknown.status && known.text == unknown.text, "\(known.text) vs \(unknown.text)")
        // And it gave the existing account no password.
        let attempt = try server.auth("signin", ["email": "ada@example.com", "password": "attacker's choice", "consent": true], apiToken: app)
        #expect(attempt.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(attempt.text)")
    }

    @Test func wrongPasswordAndUnknownEmailAnswerAlike() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("alan"))@example.com"
        try server.signUpVerified(email, password: "enigma machine", apiToken: app)
        let wrong = try server.auth("signin", ["email": .string(email), "password": "bombe machine", "consent": true], apiToken: app)
        let nobody = try server.auth("signin", ["email": .string("\(unique("nobody"))@example.com"), "password": "bombe machine", "consent": true],
                                     apiToken: app)
        #expect(wrong.status == 401 && nobody.status == 401)
        #expect(wrong.json.serverErrorCode == "AUTHENTICATION_FAILED" && wrong.json["reason"] == nobody.json["reason"], "\(wrong.text) / \(nobody.text)")
    }

    struct BadInput: CustomStringConvertible, Sendable {
        var description: String
        var operation: String
        var body: String?
        var withAPIToken = true
        var code: String
        var status: Int
    }

    static let badInputs: [BadInput] = [
        BadInput(description: "signup without email", operation: "signup", body: #"{"password":"long enough"}"#, code: "BAD_REQUEST", status: 400),
        BadInput(description: "signup with a non-address", operation: "signup", body: #"{"email":"not an address","password":"long enough"}"#,
                 code: "BAD_REQUEST", status: 400),
        BadInput(description: "signup with a short password", operation: "signup", body: #"{"email":"a@example.com","password":"short"}"#,
                 code: "BAD_REQUEST", status: 400),
        BadInput(description: "signup with a 2000-byte password", operation: "signup",
                 body: #"{"email":"a@example.com","password":""# + String(repeating: "x", count: 2000) + #""}"#, code: "BAD_REQUEST", status: 400),
        BadInput(description: "signin with a numeric password", operation: "signin", body: #"{"email":"a@example.com","password":12345678}"#,
                 code: "BAD_REQUEST", status: 400),
        BadInput(description: "signin with consent as a string", operation: "signin",
                 body: #"{"email":"a@example.com","password":"long enough","consent":"yes"}"#, code: "BAD_REQUEST", status: 400),
        BadInput(description: "malformed JSON", operation: "signin", body: #"{"email":"#, code: "BAD_REQUEST", status: 400),
        BadInput(description: "signin without ckAPIToken", operation: "signin", body: #"{"email":"a@example.com","password":"long enough"}"#,
                 withAPIToken: false, code: "AUTHENTICATION_FAILED", status: 401),
        BadInput(description: "verify with an unknown link", operation: "verify", body: #"{"token":"nope"}"#, code: "AUTHENTICATION_FAILED", status: 401),
        BadInput(description: "sessions without a user", operation: "sessions", body: nil, code: "AUTHENTICATION_REQUIRED", status: 421),
        BadInput(description: "unknown operation", operation: "teleport", body: "{}", code: "NOT_FOUND", status: 404),
    ]

    @Test(arguments: badInputs)
    func badInputIsACloudKitError(_ input: BadInput) throws {
        let (server, app) = try Self.lazy.get()
        var url = "\(server.baseURL)/auth/1/\(TestServer.container)/\(input.operation)"
        if input.withAPIToken { url += "?ckAPIToken=" + app.addingPercentEncoding(withAllowedCharacters: .alphanumerics)! }
        let response = try server.request(input.body == nil ? "GET" : "POST", url, body: input.body.map { Data($0.utf8) }, token: .some(nil))
        #expect(response.status == input.status, "\(response.text)")
        #expect(response.json.serverErrorCode == input.code, "\(response.text)")
        #expect(response.json["reason"]?.stringValue?.isEmpty == false)
    }

    @Test func failedSignInsAreThrottledPerAccountThenPerAddress() throws {
        // 3 failures per account, 6 per address, in 60 s.
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "3,6,60"])
        let app = try server.apiToken()
        let email = "\(unique("target"))@example.com"
        try server.signUpVerified(email, password: "the right one", apiToken: app)
        for _ in 0..<3 {
            let wrong = try server.auth("signin", ["email": .string(email), "password": "a wrong one", "consent": true], apiToken: app)
            #expect(wrong.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(wrong.text)")
        }
        // Locked: even the right password gets THROTTLED, so guessing on tells nothing.
        let locked = try server.auth("signin", ["email": .string(email), "password": "the right one", "consent": true], apiToken: app)
        #expect(locked.status == 429 && locked.json.serverErrorCode == "THROTTLED", "\(locked.text)")
        let retry = try #require(locked.json["retryAfter"]?.int64Value)
        #expect((1...60).contains(retry), "\(retry)")
        // Unknown accounts count the same way; the address runs out after 6 failures in all.
        let other = "\(unique("other"))@example.com"
        for _ in 0..<3 {
            let wrong = try server.auth("signin", ["email": .string(other), "password": "a wrong one", "consent": true], apiToken: app)
            #expect(wrong.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(wrong.text)")
        }
        let third = try server.auth("signin", ["email": .string("\(unique("third"))@example.com"), "password": "x", "consent": true], apiToken: app)
        #expect(third.json.serverErrorCode == "THROTTLED" && third.json["retryAfter"]?.int64Value != nil, "\(third.text)")
    }

    /// Behind a load balancer every request comes from the balancer; `--trusted-proxy` makes the
    /// client its `X-Forwarded-For` names the one counted (N67), and a forged header from anyone
    /// else changes nothing.
    @Test(arguments: [true, false])
    func theAddressLimitCountsTheForwardedClientOnlyBehindATrustedProxy(trusted: Bool) throws {
        // 10 failures per account, 3 per address, in 60 s; the test's own address, 127.0.0.1, is the "balancer".
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "10,3,60"]
                                    + (trusted ? ["--trusted-proxy", "127.0.0.0/8"] : []))
        let app = try server.apiToken()
        let email = "\(unique("proxied"))@example.com"
        try server.signUpVerified(email, password: "the right one", apiToken: app)
        func signIn(_ password: String, from client: String) throws -> TestServer.Response {
            try server.auth("signin", ["email": .string(email), "password": .string(password), "consent": true], apiToken: app,
                            headers: ["X-Forwarded-For": client])
        }
        for _ in 0..<3 {
            let wrong = try signIn("a wrong one", from: "203.0.113.7")
            #expect(wrong.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(wrong.text)")
        }
        let same = try signIn("the right one", from: "203.0.113.7")
        #expect(same.json.serverErrorCode == "THROTTLED", "\(same.text)")
        // Another client through the same balancer: its own count when the balancer is trusted;
        // otherwise one address for everyone, and the forged header does not help.
        let other = try signIn("the right one", from: "198.51.100.20")
        if trusted {
            #expect(other.status == 200, "\(other.text)")
        } else {
            #expect(other.json.serverErrorCode == "THROTTLED", "\(other.text)")
        }
        // A client that writes its own header in front of the balancer's gains nothing: the
        // balancer appends the peer it heard from, and that is what is read.
        let forged = try signIn("the right one", from: "198.51.100.99, 203.0.113.7")
        #expect(forged.json.serverErrorCode == "THROTTLED", "\(forged.text)")
    }

    @Test func passwordHashUpgradesToNewParametersAtTheNextSignIn() throws {
        let server = try TestServer(extraArguments: ["--password-hash", "m=64,t=1,p=1"])
        let app = try server.apiToken()
        let email = "\(unique("upgrade"))@example.com"
        let user = try server.signUpVerified(email, password: "an old password", apiToken: app)
        let secret = { try server.sqlite("SELECT secret FROM sign_in_methods WHERE user_record_name = '\(user)' AND kind = 'password'") }
        let old = try secret()
        #expect(old.hasPrefix("$argon2id$v=19$m=64,t=1,p=1$"), "\(old)")
        try server.start(extraArguments: ["--password-hash", "m=256,t=2,p=1"])
        _ = try server.signIn(email, password: "an old password", apiToken: app)
        let new = try secret()
        #expect(new.hasPrefix("$argon2id$v=19$m=256,t=2,p=1$") && new != old, "\(new)")
        // The new hash still takes the password, and only it.
        _ = try server.signIn(email, password: "an old password", apiToken: app)
        let wrong = try server.auth("signin", ["email": .string(email), "password": "another one", "consent": true], apiToken: app)
        #expect(wrong.json.serverErrorCode == "AUTHENTICATION_FAILED")
    }
}

/// One server with cheap hashing and an API token, started on first use.
final class LazyAccountServer: @unchecked Sendable {
    private let arguments: [String]
    private var instance: (TestServer, String)?
    private let lock = NSLock()

    init(_ arguments: [String]) { self.arguments = arguments }

    func get() throws -> (server: TestServer, apiToken: String) {
        lock.lock()
        defer { lock.unlock() }
        if let instance { return instance }
        let server = try TestServer(extraArguments: arguments)
        let made = (server, try server.apiToken())
        instance = made
        return made
    }
}
