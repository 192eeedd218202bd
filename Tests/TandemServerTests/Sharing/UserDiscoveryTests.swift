import Foundation
import Testing
import TandemCore

/// users/discover (GET and POST), users/lookup/email, users/lookup/id and the discoverability
/// choice (cloudkit.md §2.10).
@Suite("User discovery")
struct UserDiscoveryTests {
    @Test("only discoverable people are found by email or phone; the choice can be changed")
    func discoverByLookupInfo() throws {
        let server = try Shared.server
        let caller = try server.person("caller")
        let open = try server.person("open", phone: "+1 555 0\(Int.random(in: 100_000...999_999))", discoverable: true)
        let shy = try server.person("shy")
        let body: JSONValue = ["lookupInfos": [["emailAddress": .string(open.email)], ["emailAddress": .string(shy.email)],
                                               ["emailAddress": "nobody@example.com"]]]
        let found = try server.post("users/discover", body, as: caller, database: "public").json["users"]?.arrayValue ?? []
        #expect(found.compactMap { $0["userRecordName"]?.stringValue } == [open.recordName])
        #expect(found.first?["nameComponents"]?["givenName"]?.stringValue?.hasPrefix("Open") == true)

        let byEmail = try server.post("users/lookup/email", ["users": [["emailAddress": .string(open.email)], ["emailAddress": .string(shy.email)]]],
                                      as: caller, database: "public").json["users"]?.arrayValue ?? []
        #expect(byEmail.count == 1)
        #expect(byEmail.first?["emailAddress"] == .string(open.email))
        #expect(byEmail.first?["firstName"] != nil)

        let byID = try server.post("users/lookup/id", ["users": [["userRecordName": .string(shy.recordName)]]], as: caller, database: "public")
            .json["users"]?.arrayValue ?? []
        #expect(byID.first?["userRecordName"] == .string(shy.recordName))
        #expect(byID.first?["firstName"] == nil, "names only for discoverable users")

        // Shy opts in; now they are found.
        let opted = try server.tandem("users/discoverability", ["discoverable": true], as: shy)
        #expect(opted.status == 200)
        let again = try server.post("users/discover", ["lookupInfos": [["emailAddress": .string(shy.email)]]], as: caller, database: "public")
        #expect(again.json["users"]?.arrayValue?.count == 1)
        _ = try server.tandem("users/discoverability", ["discoverable": false], as: shy)
        let hidden = try server.post("users/discover", ["lookupInfos": [["emailAddress": .string(shy.email)]]], as: caller, database: "public")
        #expect(hidden.json["users"]?.arrayValue?.isEmpty == true)
    }

    @Test("GET users/discover lists the discoverable people the caller shares with")
    func discoverPartners() throws {
        let server = try Shared.server
        let owner = try server.person("owner", discoverable: true)
        let friend = try server.person("friend", discoverable: true)
        let quiet = try server.person("quiet")
        let outsider = try server.person("outsider", discoverable: true)
        let note = try server.shareNote(owner: owner, participants: [Invite.email(friend), Invite.email(quiet)])
        try server.accept(note, as: friend)
        try server.accept(note, as: quiet)
        let seenByFriend = try server.get("users/discover", token: .some(friend.token), database: "public").json["users"]?.arrayValue ?? []
        let names = Set(seenByFriend.compactMap { $0["userRecordName"]?.stringValue })
        #expect(names == [owner.recordName])
        let seenByOwner = try server.get("users/discover", token: .some(owner.token), database: "public").json["users"]?.arrayValue ?? []
        #expect(Set(seenByOwner.compactMap { $0["userRecordName"]?.stringValue }) == [friend.recordName])
        #expect(names.contains(outsider.recordName) == false)
    }

    @Test("malformed lookups are refused", arguments: [
        ["lookupInfos": "x"], ["lookupInfos": [["emailAddress": "no-at-sign"]]], ["lookupInfos": [[:]]], [:],
    ] as [JSONValue])
    func badLookups(_ body: JSONValue) throws {
        let server = try Shared.server
        let caller = try server.person("caller")
        let response = try server.post("users/discover", body, as: caller, database: "public")
        #expect(response.status == 400)
        #expect(response.json.serverErrorCode == "BAD_REQUEST")
    }
}
