import Foundation
import Testing
import TandemCore

/// Push registration as CloudKit JS 2.6.4 sends it: its `device` API module builds
/// `POST /device/1/{container}/{environment}/tokens/create` with
/// `{"apnsEnvironment","clientId"}` (and `tokens/register` with `apnsToken` added) — no database
/// segment — and reads `apnsToken` and `webcourierURL` from the answer to either.
@Suite("CloudKit JS: push registration")
struct CloudKitJSPushRegistrationTests {
    func deviceURL(_ server: TestServer, _ action: String, container: String = TestServer.container) -> String {
        "\(server.baseURL)/device/1/\(container)/development/tokens/\(action)"
    }

    @Test("tokens/create under /device/1/ answers apnsToken and a webcourierURL that long-polls")
    func createUnderDevice() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-push")
        let body = Data(#"{"apnsEnvironment":"development","clientId":"6a1f0c5e-3b0e-4a4e-9d53-0d8c2f6c1a11"}"#.utf8)
        let created = try server.request("POST", deviceURL(server, "create"), body: body, token: .some(person.token))
        #expect(created.status == 200, "\(created.text)")
        #expect(created.json["apnsEnvironment"] == "development")
        let token = try #require(created.json["apnsToken"]?.stringValue)
        let courier = try #require(created.json["webcourierURL"]?.stringValue)
        #expect(courier.hasPrefix(server.baseURL + "/webcourier/1/"))
        let poll = try server.request("GET", courier + "?timeout=0", token: .some(nil))
        #expect(poll.status == 200 || poll.status == 204, "\(poll.status) \(poll.text)")

        // CloudKit JS re-registers the token it holds (a second container, or refreshToken=false).
        let again = Data(#"{"apnsEnvironment":"development","apnsToken":"\#(token)","clientId":"6a1f0c5e-3b0e-4a4e-9d53-0d8c2f6c1a11"}"#.utf8)
        let registered = try server.request("POST", deviceURL(server, "register"), body: again, token: .some(person.token))
        #expect(registered.status == 200, "\(registered.text)")
        #expect(registered.json["apnsToken"]?.stringValue == token)
        #expect(registered.json["webcourierURL"]?.stringValue == courier)
    }

    @Test("/device/1/ refuses what /database/1/ tokens routes refuse", arguments: [
        ("create", #"{"apnsEnvironment":"staging"}"#, "person", 400, "BAD_REQUEST"),
        ("register", #"{"apnsEnvironment":"development","apnsToken":"short"}"#, "person", 400, "BAD_REQUEST"),
        ("create", #"{"apnsEnvironment":"development"}"#, "anonymous", 421, "AUTHENTICATION_REQUIRED"),
        ("delete", #"{"apnsEnvironment":"development"}"#, "person", 404, "NOT_FOUND"),
    ])
    func refusals(action: String, body: String, caller: String, status: Int, code: String) throws {
        let server = try Shared.server
        let person = try server.person("ckjs-push")
        let response = try server.request("POST", deviceURL(server, action), body: Data(body.utf8),
                                          token: .some(caller == "anonymous" ? nil : person.token))
        #expect(response.status == status, "\(response.text)")
        #expect(response.json.serverErrorCode == code)
    }

    @Test("a token registered by one user cannot be taken over by another through /device/1/")
    func registerIsPerUser() throws {
        let server = try Shared.server
        let owner = try server.person("ckjs-push-owner")
        let thief = try server.person("ckjs-push-thief")
        let created = try server.request("POST", deviceURL(server, "create"), body: Data(#"{"apnsEnvironment":"development"}"#.utf8),
                                         token: .some(owner.token))
        let token = try #require(created.json["apnsToken"]?.stringValue)
        let taken = try server.request("POST", deviceURL(server, "register"),
                                       body: Data(#"{"apnsEnvironment":"development","apnsToken":"\#(token)"}"#.utf8), token: .some(thief.token))
        #expect(taken.status == 403, "\(taken.text)")
        #expect(taken.json.serverErrorCode == "ACCESS_DENIED")
    }
}

/// CloudKit JS keeps one push token per APNs environment and registers it with tokens/register
/// for every further container it is configured with; that container's notifications must reach
/// the same long poll.
@Suite("CloudKit JS: one push token, several containers")
struct CloudKitJSSharedTokenTests {
    @Test("a token created in one container and registered in another long-polls the second container's notifications")
    func tokenRegisteredForSecondContainer() throws {
        let server = try Shared.server
        let person = try server.person("ckjs-two-containers")
        let other = "iCloud.com.example.second-\(UUID().uuidString.prefix(8).lowercased())"
        try TestServer.admin(["container", "create", other, "--data", server.dataDirectory])
        let created = try server.request("POST", "\(server.baseURL)/device/1/\(TestServer.container)/development/tokens/create",
                                         body: Data(#"{"apnsEnvironment":"development"}"#.utf8), token: .some(person.token))
        let token = try #require(created.json["apnsToken"]?.stringValue, "\(created.text)")
        let courier = try #require(created.json["webcourierURL"]?.stringValue)
        let registered = try server.request("POST", "\(server.baseURL)/device/1/\(other)/development/tokens/register",
                                            body: Data(#"{"apnsEnvironment":"development","apnsToken":"\#(token)"}"#.utf8), token: .some(person.token))
        #expect(registered.status == 200, "\(registered.text)")
        let subscribe: JSONValue = ["operations": [["operationType": "create", "subscription": ["subscriptionID": "all", "subscriptionType": "database"]]]]
        let subscribed = try server.request("POST", server.databaseURL("subscriptions/modify", container: other),
                                            body: Data(JSONWriter.bytes(subscribe)), token: .some(person.token))
        #expect(subscribed.status == 200, "\(subscribed.text)")
        let write = try server.request("POST", server.databaseURL("records/modify", container: other),
                                       body: Data(JSONWriter.bytes(Body.modify([Body.operation("create", name: "x", recordType: "Item", fields: [:])]))),
                                       token: .some(person.token))
        #expect(write.status == 200, "\(write.text)")
        var response = try server.request("GET", courier + "?timeout=5", token: .some(nil))
        let deadline = Date().addingTimeInterval(5)
        while response.status == 204 && Date() < deadline { response = try server.request("GET", courier + "?timeout=1", token: .some(nil)) }
        #expect(response.status == 200)
        #expect(response.json["ck"]?["cid"]?.stringValue == other, "\(response.text)")
        #expect(response.json["ck"]?["fet"]?["sid"] == "all")
    }
}
