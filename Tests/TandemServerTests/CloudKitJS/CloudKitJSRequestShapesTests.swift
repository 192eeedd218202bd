import Foundation
import Testing
import TandemCore

/// Requests in the shape CloudKit JS 2.6.4 builds them, and what it reads from the answers.
/// - `fetchRecordInfos(guids)` sends one `records/resolve` (public database) with
///   `{"shortGUIDs":[{"value"},...]}` and splits `results` into results and errors by
///   `serverErrorCode`.
/// - `fetchRecordZoneChanges` sends `changes/zone` with `{"zones":[{zoneID, numbersAsStrings,
///   desiredKeys, desiredRecordTypes, resultsLimit, syncToken, reverse}]}`: the options sit in
///   each zone entry, not at the top level.
/// - `fetchRecords` / `performQuery` send `numbersAsStrings` at the top level.
/// - `discoverUserIdentities` / `discoverAllUserIdentities` send users/discover (POST with
///   `lookupInfos`, and without a body) and read `users`.
@Suite("CloudKit JS: request shapes")
struct CloudKitJSRequestShapesTests {
    @Test("records/resolve with several shortGUIDs answers one result per GUID, in order, errors marked by serverErrorCode")
    func resolveSeveral() throws {
        let server = try Shared.server
        let owner = try server.person("ckjs-resolve-owner")
        let reader = try server.person("ckjs-resolve-reader")
        let first = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        let second = try server.shareNote(owner: owner, participants: [Invite.email(reader)])
        let body: JSONValue = ["shortGUIDs": [["value": .string(first.guid)], ["value": "no-such-share-guid"], ["value": .string(second.guid)]]]
        let response = try server.post("records/resolve", body, as: reader, database: "public")
        #expect(response.status == 200, "\(response.text)")
        let results = response.json["results"]?.arrayValue ?? []
        #expect(results.count == 3, "\(response.text)")
        guard results.count == 3 else { return }
        #expect(results[0].serverErrorCode == nil)
        #expect(results[0]["shortGUID"]?.stringValue == first.guid)
        #expect(results[1].serverErrorCode == "NOT_FOUND")
        #expect(results[2].serverErrorCode == nil)
        #expect(results[2]["shortGUID"]?.stringValue == second.guid)
        #expect(results[0]["share"]?["recordName"]?.stringValue == first.shareName)
        #expect(results[2]["share"]?["recordName"]?.stringValue == second.shareName)
    }

    @Test("changes/zone reads numbersAsStrings and desiredKeys from each zone entry, as CloudKit JS sends them")
    func zoneChangesPerEntryOptions() throws {
        let server = try Shared.server
        let owner = try server.person("ckjs-changes")
        let zones = [unique("ckjs-a"), unique("ckjs-b")]
        for zone in zones {
            _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                as: owner, database: "private")
            _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "item", recordType: "Item",
                                                                              fields: ["n": Body.field(8), "title": Body.field("t")])], zone: zone),
                                as: owner, database: "private")
        }
        let body: JSONValue = ["zones": [
            ["zoneID": ["zoneName": .string(zones[0])], "numbersAsStrings": true, "desiredKeys": ["n"], "resultsLimit": 10],
            ["zoneID": ["zoneName": .string(zones[1])], "resultsLimit": 10],
        ]]
        let response = try server.post("changes/zone", body, as: owner, database: "private")
        let answered = response.json["zones"]?.arrayValue ?? []
        #expect(answered.count == 2, "\(response.text)")
        let strings = answered.first?["records"]?.arrayValue?.first?["fields"]
        #expect(strings?["n"]?["value"] == "8", "\(response.text)")
        #expect(strings?["title"] == nil)
        let plain = answered.last?["records"]?.arrayValue?.first?["fields"]
        #expect(plain?["n"]?["value"] == 8)
        #expect(plain?["title"]?["value"] == "t")
    }

    @Test("records/lookup and records/query read numbersAsStrings at the top level", arguments: ["records/lookup", "records/query"])
    func topLevelNumbersAsStrings(operation: String) throws {
        let server = try Shared.server
        let owner = try server.person("ckjs-numbers")
        let zone = unique("ckjs-n")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "num", recordType: "Item",
                                                                          fields: ["n": Body.field(42), "x": Body.field(1.5)])], zone: zone),
                            as: owner, database: "private")
        var body: JSONObject = ["zoneID": ["zoneName": .string(zone)], "numbersAsStrings": true]
        if operation == "records/lookup" { body["records"] = [["recordName": "num"]] } else { body["query"] = ["recordType": "Item"] }
        let response = try server.post(operation, .object(body), as: owner, database: "private")
        let fields = response.json.record(0)["fields"]
        #expect(fields?["n"]?["value"] == "42", "\(response.text)")
        #expect(fields?["x"]?["value"] == "1.5")
    }

    @Test("users/discover: POST with lookupInfos and the body-less GET of discoverAllUserIdentities both answer users")
    func discover() throws {
        let server = try Shared.server
        let caller = try server.person("ckjs-discoverer")
        let found = try server.person("ckjs-discoverable", discoverable: true)
        // The body-less call lists discoverable people the caller shares with (Tandem keeps no address book).
        let note = try server.shareNote(owner: found, participants: [Invite.email(caller)])
        try server.accept(note, as: caller)
        let post = try server.post("users/discover", ["lookupInfos": [["emailAddress": .string(found.email)]]], as: caller, database: "public")
        #expect(post.json["users"]?.arrayValue?.first?["userRecordName"]?.stringValue == found.recordName, "\(post.text)")
        let all = try server.request("GET", server.databaseURL("users/discover", database: "public"), token: .some(caller.token))
        #expect(all.status == 200)
        #expect(all.json["users"]?.arrayValue?.contains { $0["userRecordName"]?.stringValue == found.recordName } == true, "\(all.text)")
    }
}
