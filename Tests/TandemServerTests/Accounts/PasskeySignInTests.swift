import Foundation
import Testing
@testable import TandemServer
import TandemCore
import TandemCrypto

/// Passkeys through the real server's sign-in page over HTTP, with a software authenticator
/// (TestAuthenticator): sign-up pending the emailed link (A28), consent, and the refusals that
/// need server state — a replayed registration or assertion (single-use challenges), a counter
/// regression (nothing stored), a challenge from another browser session, and an IP-address URL.
@Suite struct PasskeySignInTests {
    struct Page {
        var server: TestServer
        var base: String
        var form: FormPage

        init(_ server: TestServer, _ path: String, apiToken: String, host: String = "localhost") throws {
            self.server = server
            base = "http://\(host):\(server.port)"
            form = try FormPage(try server.request("GET", base + path + "?ckAPIToken=" + apiToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!,
                                                   token: .some(nil)))
        }

        func post(_ path: String, _ fields: [String: String], cookie: String? = nil) throws -> TestServer.Response {
            var all = fields
            all["csrf"] = all["csrf"] ?? form.csrf
            all["ckAPIToken"] = form.apiToken
            let body = all.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
            return try server.request("POST", base + path, body: Data(body.utf8), token: .some(nil),
                                      headers: ["Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie ?? form.cookie])
        }

        func challenge(_ fields: [String: String]) throws -> [UInt8] {
            let response = try post("/signin/passkey/options", fields)
            guard let text = response.json["challenge"]?.stringValue, let bytes = Base64URL.decode(text) else {
                throw TestFailure("options: \(response.status) \(response.text)")
            }
            return bytes
        }
    }

    @Test func signUpSignInAndTheRefusalsThatNeedServerState() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--sign-in-attempts", "100,100,60"])
        let app = try server.apiToken(origins: ["https://app.example"])
        let email = "\(unique("pk"))@example.com".lowercased()
        let authenticator = try TestAuthenticator()
        let origin = "http://localhost:\(server.port)"

        // Sign-up: options name the RP ID; the registration stores only a pending sign-up link.
        let signUp = try Page(server, "/signin/signup", apiToken: app)
        let options = try signUp.post("/signin/passkey/options", ["purpose": "create", "email": email, "name": "Pat"])
        #expect(options.json["rp"]?["id"]?.stringValue == "localhost" && options.json["user"]?["name"]?.stringValue == email, "\(options.text)")
        let created = try #require(options.json["challenge"]?.stringValue.flatMap(Base64URL.decode))
        let client = TestAuthenticator.clientData(type: "webauthn.create", challenge: created, origin: origin)
        let auth = authenticator.authenticatorData(rpID: "localhost", flags: TestAuthenticator.up | TestAuthenticator.uv, signCount: 0,
                                                   attested: authenticator.coseKey())
        let registration = ["clientDataJSON": Base64URL.encode(client),
                            "attestationObject": Base64URL.encode(authenticator.attestationObject(authData: auth))]
        let registered = try signUp.post("/signin/passkey/signup", registration)
        #expect(registered.status == 200 && registered.text.contains("Check your email"), "\(registered.status) \(registered.text)")
        #expect(try server.sqlite("SELECT count(*) FROM users WHERE email = '\(email)'") == "0")
        #expect(try server.sqlite("SELECT count(*) FROM account_links WHERE email = '\(email)' AND pending_secret LIKE 'passkey %'") == "1")
        let replayed = try signUp.post("/signin/passkey/signup", registration)
        #expect(replayed.status == 403 && replayed.text.contains("unknown or was used already"), "\(replayed.status)")
        _ = try TestServer.admin(["user", "verify", email, "--data", server.dataDirectory])

        // Sign-in: a first one asks for consent.
        let signIn = try Page(server, "/signin", apiToken: app)
        func assertion(_ challenge: [UInt8], count: UInt32) throws -> [String: String] {
            let client = TestAuthenticator.clientData(type: "webauthn.get", challenge: challenge, origin: origin)
            let data = authenticator.authenticatorData(rpID: "localhost", flags: TestAuthenticator.up | TestAuthenticator.uv, signCount: count)
            return ["credentialID": Base64URL.encode(authenticator.credentialID), "clientDataJSON": Base64URL.encode(client),
                    "authenticatorData": Base64URL.encode(data),
                    "signature": Base64URL.encode(try authenticator.signature(authData: data, clientData: client))]
        }
        let first = try assertion(try signIn.challenge(["purpose": "get"]), count: 5)
        let consent = try signIn.post("/signin/passkey", first)
        #expect(consent.status == 200 && consent.text.contains("id=\"allow\""), "\(consent.status) \(consent.text)")
        let stored = "SELECT secret FROM sign_in_methods WHERE kind = 'passkey' AND subject = '\(Base64URL.encode(authenticator.credentialID))'"
        #expect(try server.sqlite(stored).hasSuffix(" 5"))

        let cases: [(String, () throws -> TestServer.Response, Int, String)] = [
            ("a replayed assertion", { try signIn.post("/signin/passkey", first) }, 401, "unknown or was used already"),
            ("a counter regression", { try signIn.post("/signin/passkey", try assertion(try signIn.challenge(["purpose": "get"]), count: 3)) },
             401, "signature counter went from 5 to 3"),
            ("another browser session's challenge", {
                let other = try Page(server, "/signin", apiToken: app)
                return try signIn.post("/signin/passkey", try assertion(try other.challenge(["purpose": "get"]), count: 9))
            }, 401, "issued for another session"),
            ("an unregistered passkey", {
                var fields = try assertion(try signIn.challenge(["purpose": "get"]), count: 9)
                fields["credentialID"] = Base64URL.encode(Digest.randomBytes(32))
                return try signIn.post("/signin/passkey", fields)
            }, 401, "not registered here"),
            ("malformed fields", { try signIn.post("/signin/passkey", ["credentialID": "!!"]) }, 400, "base64url"),
            ("no CSRF field", { try signIn.post("/signin/passkey/options", ["purpose": "get", "csrf": "0"]) }, 403, "ACCESS_DENIED"),
            ("an IP-address URL", { try Page(server, "/signin", apiToken: app, host: "127.0.0.1").post("/signin/passkey/options", ["purpose": "get"]) },
             400, "not an IP address"),
        ]
        for (name, run, status, text) in cases {
            let response = try run()
            #expect(response.status == status && response.text.contains(text), "\(name): \(response.status) \(response.text.prefix(600))")
        }
        #expect(try server.sqlite(stored).hasSuffix(" 5"), "a refused assertion stores nothing")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE container_id = '\(TestServer.container)' AND kind = 'user'") == "0", "nothing was issued before consent")
    }
}
