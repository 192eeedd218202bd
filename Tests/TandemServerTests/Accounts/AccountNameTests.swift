import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The name a person shows others, set with `POST /auth/1/{container}/account` (issue 23 item 7;
/// decisions R31) against a real server.
@Suite("Account names")
struct AccountNameTests {
    static let server = LazyTestServer(arguments: TestServer.cheapHash)

    /// Seed behaviour: `givenName`/`familyName` were unknown settings (BAD_REQUEST). Now they are
    /// set trimmed, shown in the account and `users/current`, kept when absent and cleared by
    /// `null` or an empty string; malformed ones change nothing.
    @Test func namesAreSetShownClearedAndMalformedOnesRefused() throws {
        let server = try Self.server.server
        let ada = try server.person("ada")
        let set = try server.auth("account", ["givenName": "  Ada ", "familyName": "Lovelace"], bearer: ada.token)
        #expect(set.status == 200, "\(set.text)")
        #expect(set.json["givenName"]?.stringValue == "Ada" && set.json["familyName"]?.stringValue == "Lovelace")
        #expect(set.json["displayName"]?.stringValue == "Ada Lovelace")
        let current = try server.request("GET", server.databaseURL("users/current", database: "public"), token: .some(ada.token))
        #expect(current.json["nameComponents"]?["givenName"]?.stringValue == "Ada", "\(current.text)")
        #expect(current.json["nameComponents"]?["familyName"]?.stringValue == "Lovelace")

        let kept = try server.auth("account", ["familyName": .null], bearer: ada.token)
        #expect(kept.json["givenName"]?.stringValue == "Ada" && kept.json["familyName"] == nil)

        let malformed: [JSONObject] = [["givenName": 7], ["familyName": .string(String(repeating: "x", count: 101))],
                                       ["givenName": "Ada\u{0007}"], ["nickname": "A"],
                                       ["givenName": "\u{202E}ecilA"], ["familyName": "Lovelace\u{2066}"]]
        for body in malformed {
            let refused = try server.auth("account", .object(body), bearer: ada.token)
            #expect(refused.status == 400 && refused.json["serverErrorCode"]?.stringValue == "BAD_REQUEST", "\(body): \(refused.text)")
        }
        #expect(try server.auth("account", bearer: ada.token).json["givenName"]?.stringValue == "Ada", "nothing changed")
        let cleared = try server.auth("account", ["givenName": ""], bearer: ada.token)
        #expect(cleared.json["givenName"] == nil && cleared.json["displayName"] == nil)
    }
}
