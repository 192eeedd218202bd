import Foundation
import Testing
import TandemCore

/// Admission from memory (decisions E22): a JSON request whose sender's grants the server read
/// moments ago is admitted on the service thread, without the two thread hand-offs of a worker's
/// admission; anything the memory cannot vouch for goes to a worker, which answers as before.
/// Counted by `/metrics` `tandem_http_admissions_total{decided="memory"|"worker"}`.
@Suite(.serialized)
struct QuickAdmissionTests {
    static let lazy = LazyAccountServer(TestServer.cheapHash)

    /// The two counters of `server`: (memory, worker).
    static func admissions(_ server: TestServer) -> (memory: Int, worker: Int) {
        (NodeCluster.counter("tandem_http_admissions_total{decided=\"memory\"}", on: server),
         NodeCluster.counter("tandem_http_admissions_total{decided=\"worker\"}", on: server))
    }

    /// Sends one `records/lookup` and returns its answer and where its admission was decided.
    static func lookup(_ server: TestServer, token: String??, database: String = "private",
                       query: String = "") throws -> (response: TestServer.Response, decided: String) {
        let before = admissions(server)
        let response = try server.request("POST", server.databaseURL("records/lookup", database: database) + query,
                                          body: Data(#"{"records":[{"recordName":"nothing-here"}]}"#.utf8), token: token)
        let after = admissions(server)
        let decided = after.memory > before.memory ? "memory" : after.worker > before.worker ? "worker" : "none"
        return (response, decided)
    }

    @Test func aSenderCheckedMomentsAgoIsAdmittedFromMemory() throws {
        let (server, _) = try Self.lazy.get()
        let token = try TestServer.admin(["token", "create", "--user", "ada@example.com", "--data", server.dataDirectory])
        let first = try Self.lookup(server, token: .some(token))
        #expect(first.response.status == 200 && first.decided == "worker", "a token the server has not read yet: \(first)")
        for _ in 0..<3 {
            let next = try Self.lookup(server, token: .some(token))
            #expect(next.response.status == 200 && next.decided == "memory", "\(next.decided) \(next.response.text)")
        }
    }

    @Test func aSignedOutTokenGoesToAWorkerAndIsRefusedBeforeItsBody() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("quick"))@example.com".lowercased()
        try server.signUpVerified(email, password: "admitted quickly", apiToken: app)
        let token = try server.signIn(email, password: "admitted quickly", apiToken: app)
        _ = try Self.lookup(server, token: .some(token))
        #expect(try Self.lookup(server, token: .some(token)).decided == "memory")
        let out = try server.auth("signout", [:], bearer: token)
        #expect(out.status == 200, "\(out.text)")
        let refused = try Self.lookup(server, token: .some(token))
        #expect(refused.decided == "worker", "a revocation through the server empties the memory at once")
        #expect(refused.response.status == 401 && refused.response.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(refused.response.text)")
    }

    /// Credentials the memory cannot vouch for are a worker's to decide, and answered as before.
    @Test(arguments: [
        ("an unknown token", "Bearer tdu_unknownunknownunknownunknownunknown00", 401, "AUTHENTICATION_FAILED"),
        ("another scheme", "Basic YWRhOmFkYQ==", 401, "AUTHENTICATION_FAILED"),
        ("a scheme without a token", "Bearer ", 401, "AUTHENTICATION_FAILED"),
    ])
    func whatMemoryCannotVouchForIsAskedOfAWorker(label: String, authorization: String, status: Int, code: String) throws {
        let (server, _) = try Self.lazy.get()
        for _ in 0..<2 {
            let before = Self.admissions(server)
            let response = try server.request("POST", server.databaseURL("records/lookup"),
                                              body: Data(#"{"records":[{"recordName":"x"}]}"#.utf8), token: .some(nil),
                                              headers: ["Authorization": authorization])
            let after = Self.admissions(server)
            #expect(after.memory == before.memory && after.worker > before.worker, "\(label)")
            #expect(response.status == status && response.json.serverErrorCode == code, "\(label): \(response.text)")
        }
    }

    /// A user token with an API token (CloudKit JS's query parameters): both grants must be in
    /// memory; an API token of no container goes to a worker, which refuses it.
    @Test func cloudKitJSParametersNeedBothGrantsInMemory() throws {
        let (server, app) = try Self.lazy.get()
        let email = "\(unique("js"))@example.com".lowercased()
        try server.signUpVerified(email, password: "from the browser", apiToken: app)
        let token = try server.signIn(email, password: "from the browser", apiToken: app)
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let query = "?ckAPIToken=\(app)&ckWebAuthToken=\(encoded)"
        _ = try Self.lookup(server, token: .some(nil), query: query)
        let again = try Self.lookup(server, token: .some(nil), query: query)
        #expect(again.response.status == 200 && again.decided == "memory", "\(again.decided) \(again.response.text)")
        let wrongAPI = try Self.lookup(server, token: .some(nil), query: "?ckAPIToken=tdk_nope&ckWebAuthToken=\(encoded)")
        #expect(wrongAPI.decided == "worker" && wrongAPI.response.json.serverErrorCode == "AUTHENTICATION_FAILED", "\(wrongAPI.response.text)")
    }

    /// No credential at all on a public-database read open to anyone: admitted from memory, as a
    /// worker would; the private database without one is a worker's 421.
    @Test func anonymousPublicReadsAreAdmittedFromMemory() throws {
        let (server, _) = try Self.lazy.get()
        let open = try Self.lookup(server, token: .some(nil), database: "public")
        #expect(open.decided == "memory" && open.response.status == 200, "\(open.decided) \(open.response.text)")
        let closed = try Self.lookup(server, token: .some(nil))
        #expect(closed.decided == "worker" && closed.response.json.serverErrorCode == "AUTHENTICATION_REQUIRED", "\(closed.response.text)")
    }
}
