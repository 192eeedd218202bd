import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Accounts requests (`/auth/1/{container}/…`) and the sign-in page's forms: nothing a client
/// sends is read before the credential its operation needs is checked, an anonymous body is
/// small, and an operation that needs no body takes none (decisions A39, A40; QA of issue 16).
@Suite struct AccountBodyAdmissionTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    /// (operation, credential sent, status, code): every head announces a 60,000-byte body and
    /// sends none of it.
    static let refusals: [(operation: String, credential: String, status: Int, code: String)] = [
        ("signup", "none", 401, "AUTHENTICATION_FAILED"), ("signup", "forged API token", 401, "AUTHENTICATION_FAILED"),
        ("verify", "forged API token", 401, "AUTHENTICATION_FAILED"), ("password/reset", "none", 401, "AUTHENTICATION_FAILED"),
        ("password/set", "forged API token", 401, "AUTHENTICATION_FAILED"), ("signin", "none", 401, "AUTHENTICATION_FAILED"),
        ("signin", "another container's API token", 401, "AUTHENTICATION_FAILED"),
        ("token/exchange", "forged API token", 401, "AUTHENTICATION_FAILED"),
        ("signout", "none", 421, "AUTHENTICATION_REQUIRED"), ("signout", "forged user token", 401, "AUTHENTICATION_FAILED"),
        ("account", "forged user token", 401, "AUTHENTICATION_FAILED"), ("sessions/revoke", "none", 421, "AUTHENTICATION_REQUIRED"),
        ("account/delete", "API token only", 421, "AUTHENTICATION_REQUIRED"),
        ("account/delete", "forged user token", 401, "AUTHENTICATION_FAILED"),
        ("no-such-operation", "API token only", 404, "NOT_FOUND"),
    ]

    @Test(arguments: refusals.indices)
    func anAccountsBodyIsNotReadBeforeItsCredential(row: Int) throws {
        let (operation, credential, status, code) = Self.refusals[row]
        let (server, app) = try Self.lazy.get()
        var query = ""
        var authorization = ""
        switch credential {
        case "forged API token": query = "?ckAPIToken=forged"
        case "another container's API token":
            _ = try? TestServer.admin(["container", "create", "iCloud.com.example.elsewhere", "--data", server.dataDirectory])
            query = "?ckAPIToken=" + (try server.apiToken(container: "iCloud.com.example.elsewhere"))
        case "API token only": query = "?ckAPIToken=" + app
        case "forged user token": query = "?ckAPIToken=" + app; authorization = "Authorization: Bearer tdu_forged\r\n"
        default: break
        }
        let socket = try RawSocket(port: server.port)
        socket.send("POST /auth/1/\(TestServer.container)/\(operation)\(query) HTTP/1.1\r\nHost: x\r\n\(authorization)"
                    + "Content-Type: application/json\r\nContent-Length: 60000\r\n\r\n{")
        let reply = socket.readUntilClosed(seconds: 5)
        #expect(reply.status == status, "\(operation) with \(credential): \(reply.text.prefix(400))")
        #expect(reply.body.contains(code), "\(reply.body)")
        #expect(reply.closed && reply.seconds < 3, "answered and closed without waiting for the body (\(reply.seconds) s)")
    }

    /// Signing up, signing in and asking for a reset come from people nobody knows yet: their
    /// bodies are at most 64 KiB, refused (413) from the head, as are the sign-in page's forms.
    @Test func anonymousAccountBodiesAreAtMostSixtyFourKiB() throws {
        let (server, app) = try Self.lazy.get()
        for path in ["/auth/1/\(TestServer.container)/signup?ckAPIToken=\(app)", "/auth/1/\(TestServer.container)/signin?ckAPIToken=\(app)",
                     "/auth/1/\(TestServer.container)/password/reset?ckAPIToken=\(app)", "/signin", "/signin/signup"] {
            let socket = try RawSocket(port: server.port)
            socket.send("POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 65537\r\n\r\n{")
            let reply = socket.readUntilClosed(seconds: 5)
            #expect(reply.status == 413 && reply.body.contains("LIMIT_EXCEEDED"), "\(path): \(reply.text.prefix(400))")
            #expect(reply.seconds < 3, "\(path): answered from the head")
        }
        // A body within the bound still works.
        let email = "\(unique("bounded"))@example.com".lowercased()
        let signUp = try server.auth("signup", ["email": .string(email), "password": .string(String(repeating: "p", count: 1024)),
                                                "name": .string(String(repeating: "n", count: 200))], apiToken: app)
        #expect(signUp.status == 200 && signUp.json["status"] == "CHECK_EMAIL", "\(signUp.text)")
    }

    /// The credential comes first even when the body is there: a malformed body with a foreign
    /// API token is the credential's refusal, not the body's.
    @Test func theCredentialIsJudgedBeforeTheBody() throws {
        let (server, _) = try Self.lazy.get()
        for operation in ["signup", "signin", "password/reset", "verify", "password/set"] {
            let response = try server.request("POST", "\(server.baseURL)/auth/1/\(TestServer.container)/\(operation)?ckAPIToken=forged",
                                              body: Data("not json".utf8), token: .some(nil))
            #expect(response.status == 401 && response.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(operation): \(response.text)")
        }
        let revoke = try server.request("POST", "\(server.baseURL)/auth/1/\(TestServer.container)/sessions/revoke",
                                        body: Data("not json".utf8), token: .some("tdu_forged"))
        #expect(revoke.status == 401 && revoke.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(revoke.text)")
    }

    /// `curl -X POST …/signout` sends neither a body nor a content-length: signing out needs no
    /// body, so it works (QA: 411). An operation that needs a body still asks for its length.
    @Test func signOutWithoutABodyOrContentLengthSignsOut() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("curl"))@example.com".lowercased()
        try server.signUpVerified(email, password: "curl password", apiToken: app)
        let token = try server.signIn(email, password: "curl password", apiToken: app)
        let socket = try RawSocket(port: server.port)
        socket.send("POST /auth/1/\(TestServer.container)/signout HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(token)\r\nConnection: close\r\n\r\n")
        let reply = socket.readUntilClosed(seconds: 10)
        #expect(reply.status == 200 && reply.body.contains("\"revoked\":1"), "\(reply.text)")
        #expect(try server.currentUser(token) == "AUTHENTICATION_FAILED")

        // Without a token the bodiless request is still refused as signing out without a user is.
        let anonymous = try RawSocket(port: server.port)
        anonymous.send("POST /auth/1/\(TestServer.container)/signout HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        #expect(anonymous.readUntilClosed(seconds: 10).status == 421)

        // account/delete needs a password from an account that has one: said so, not 411.
        let other = try server.signIn(email, password: "curl password", apiToken: app)
        let delete = try RawSocket(port: server.port)
        delete.send("POST /auth/1/\(TestServer.container)/account/delete HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(other)\r\nConnection: close\r\n\r\n")
        let refused = delete.readUntilClosed(seconds: 10)
        #expect(refused.status == 400 && refused.body.contains("BAD_REQUEST") && refused.body.contains("password"), "\(refused.text)")
        #expect(try server.currentUser(other) != "AUTHENTICATION_FAILED", "nothing was deleted")

        let revoke = try RawSocket(port: server.port)
        revoke.send("POST /auth/1/\(TestServer.container)/sessions/revoke HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(other)\r\nConnection: close\r\n\r\n")
        #expect(revoke.readUntilClosed(seconds: 10).status == 411, "sessions/revoke needs its body")
    }
}
