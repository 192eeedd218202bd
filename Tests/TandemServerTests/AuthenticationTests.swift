import Foundation
import Testing
import TandemCore

/// Authentication (decisions D10): Bearer tokens, ckAPIToken + ckWebAuthToken, and the
/// 421 / 401 answers for missing and bad credentials.
@Suite struct AuthenticationTests {
    @Test func missingCredentialsAreAuthenticationRequired() throws {
        let server = try Shared.server
        let response = try server.get("users/current", token: .some(nil), database: "public")
        #expect(response.status == 421)
        #expect(response.json.serverErrorCode == "AUTHENTICATION_REQUIRED")
        #expect(response.json["redirectURL"]?.stringValue != nil)
    }

    @Test(arguments: ["tdu_not-a-real-token", "", "x"])
    func unknownTokenIsAuthenticationFailed(token: String) throws {
        let server = try Shared.server
        let response = try server.post("records/lookup", Body.lookup(["a"]), token: .some(token))
        #expect(response.status == 401)
        #expect(response.json.serverErrorCode == "AUTHENTICATION_FAILED")
    }

    @Test func malformedAuthorizationHeaderIsAuthenticationFailed() throws {
        let server = try Shared.server
        let response = try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(nil),
                                          headers: ["Authorization": "Basic YTpi"])
        #expect(response.status == 401)
        #expect(response.json.serverErrorCode == "AUTHENTICATION_FAILED")
    }

    @Test func bearerTokenIdentifiesTheUser() throws {
        let server = try Shared.server
        let current = try server.get("users/current", database: "public")
        #expect(current.status == 200)
        #expect(current.json["userRecordName"]?.stringValue == server.userRecordName)
        #expect(current.json["firstName"] == "Ada")
        #expect(current.json["lastName"] == "Lovelace")
        let caller = try server.get("users/caller", database: "public")
        let identity = caller.json["users"]?.arrayValue?.first
        #expect(identity?["userRecordName"]?.stringValue == server.userRecordName)
        #expect(identity?["lookupInfo"]?["emailAddress"] == "ada@example.com")
        #expect(identity?["nameComponents"]?["givenName"] == "Ada")
    }

    @Test func apiTokenAndWebAuthTokenWorkAsQueryParameters() throws {
        let server = try Shared.server
        let apiToken = try TestServer.admin(["token", "create", "--api", "--container", TestServer.container, "--data", server.dataDirectory])
        let encoded = server.token.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let url = server.databaseURL("users/current", database: "public") + "?ckAPIToken=\(apiToken)&ckWebAuthToken=\(encoded)"
        let response = try server.request("GET", url, token: .some(nil))
        #expect(response.status == 200)
        #expect(response.json["userRecordName"]?.stringValue == server.userRecordName)
        let apiOnly = try server.request("GET", server.databaseURL("users/current", database: "public") + "?ckAPIToken=\(apiToken)", token: .some(nil))
        #expect(apiOnly.status == 421)
        let wrongAPI = try server.request("GET", server.databaseURL("users/current", database: "public") + "?ckAPIToken=tdk_bogus&ckWebAuthToken=\(encoded)", token: .some(nil))
        #expect(wrongAPI.status == 401)
    }

    @Test func usersSeeOnlyTheirOwnPrivateDatabase() throws {
        let server = try Shared.server
        let name = unique("private")
        try server.create(name, fields: ["secret": Body.field("mine")])
        let email = "\(name)@example.com"
        try TestServer.admin(["user", "add", "--email", email, "--data", server.dataDirectory])
        let other = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        let lookup = try server.post("records/lookup", Body.lookup([name]), token: .some(other))
        #expect(lookup.json.record(0).serverErrorCode == "NOT_FOUND")
        let query = try server.post("records/query", ["query": ["recordType": "Note"]], token: .some(other))
        #expect(query.json.records.isEmpty)
    }

    @Test func unknownContainerIsNotFound() throws {
        let server = try Shared.server
        let response = try server.request("POST", server.databaseURL("records/lookup", container: "iCloud.nope"), body: Data(JSONWriter.bytes(Body.lookup(["a"]))))
        #expect(response.status == 404)
    }
}
