import Foundation
import Testing
import TandemCore

/// What CloudKit JS 2.6.4 reads from users/caller and users/current: `fetchCurrentUserIdentity()`
/// (used by `setUpAuth()` and `whenUserSignsIn()`) sends `GET .../public/users/caller` and hands
/// the response body itself to the app as its `UserIdentity`, so the identity's keys must sit at
/// the top level.
@Suite("CloudKit JS: user identity")
struct CloudKitJSIdentityTests {
    @Test("users/caller and users/current answer the identity at the top level, users/caller keeping its users array",
          arguments: ["users/caller", "users/current"])
    func identityAtTopLevel(operation: String) throws {
        let server = try Shared.server
        let response = try server.get(operation, database: "public")
        #expect(response.status == 200)
        let body = response.json
        #expect(body["userRecordName"]?.stringValue == server.userRecordName)
        #expect(body["nameComponents"]?["givenName"] == "Ada")
        #expect(body["nameComponents"]?["familyName"] == "Lovelace")
        #expect(body["lookupInfo"]?["emailAddress"] == "ada@example.com")
        #expect(body["lookupInfo"]?["userRecordName"]?.stringValue == server.userRecordName)
        if operation == "users/caller" {
            #expect(body["users"]?.arrayValue?.first?["userRecordName"]?.stringValue == server.userRecordName)
        }
    }
}
