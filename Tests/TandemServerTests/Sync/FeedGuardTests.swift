import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// Change-feed rules no other test guarded (issue 14, "tests that would have caught these").
@Suite struct FeedGuardTests {
    /// One `changes/zone` page from `token`: (record names, deleted names, next token, moreComing).
    static func page(_ server: TestServer, zoneID: JSONValue, token: String?, limit: Int, as person: Person,
                     database: String) throws -> (live: [String], deleted: [String], token: String?, more: Bool) {
        var entry: JSONObject = ["zoneID": zoneID]
        if let token { entry["syncToken"] = .string(token) }
        let response = try server.post("changes/zone", ["zones": [.object(entry)], "resultsLimit": .int(Int64(limit))], as: person, database: database)
        let zone = response.json["zones"]?.arrayValue?.first ?? .null
        guard zone.serverErrorCode == nil, response.status == 200 else { throw TestFailure("changes/zone: \(response.text)") }
        let records = zone["records"]?.arrayValue ?? []
        return (records.filter { $0["deleted"] != true }.compactMap { $0["recordName"]?.stringValue },
                records.filter { $0["deleted"] == true }.compactMap { $0["recordName"]?.stringValue },
                zone["syncToken"]?.stringValue, zone["moreComing"] == true)
    }

    @Test("a fetch with the token a change feed returned gets no records again, page by page and at the end", arguments: [1, 2, 200])
    func returnedTokensDoNotRepeat(limit: Int) throws {
        let server = try Shared.server
        let owner = try server.person("paged")
        let zone = unique("tokens")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        let names = (0..<5).map { "item-\($0)" }
        _ = try server.post("records/modify", Body.modify(names.map { Body.operation("create", name: $0, recordType: "Item", fields: ["n": Body.field(1)]) },
                                                          zone: zone), as: owner, database: "private")
        let zoneID: JSONValue = ["zoneName": .string(zone)]
        var seen: [String] = []
        var token: String?
        repeat {
            let page = try Self.page(server, zoneID: zoneID, token: token, limit: limit, as: owner, database: "private")
            #expect(Set(page.live).isDisjoint(with: seen), "a page repeated records: \(page.live)")
            seen += page.live
            token = page.token
            if !page.more { break }
        } while seen.count <= names.count
        #expect(seen.sorted() == names)
        let again = try Self.page(server, zoneID: zoneID, token: token, limit: limit, as: owner, database: "private")
        #expect(again.live.isEmpty && again.deleted.isEmpty && !again.more, "the final token fetched \(again.live)")
        // The database feed's token likewise.
        let database = try server.databaseFeed(as: owner, database: "private", token: nil)
        let after = try server.databaseFeed(as: owner, database: "private", token: database.token)
        #expect(after.error == nil && after.zones.isEmpty, "\(after.zones)")
    }

    @Test("a shared record deleted by a DELETE_SELF cascade from outside the share reaches the participant's zone feed as a tombstone")
    func cascadeTombstoneReachesParticipants() throws {
        let server = try Shared.server
        let ann = try server.person("ann")
        let note = try server.shareNote(owner: try server.person("owner"), participants: [Invite.email(ann)])
        try server.accept(note, as: ann)
        // `anchor` is outside the share; the shared `child` goes with it (DELETE_SELF).
        let reference: JSONValue = ["recordName": "anchor", "action": "DELETE_SELF"]
        _ = try server.ownerModify(note, [Body.operation("create", name: "anchor", fields: [:]),
                                          Body.operation("create", name: "grandchild", fields: [:], extra: ["parent": ["recordName": "child"]])])
        let linked = try server.ownerModify(note, [Body.operation("forceUpdate", name: "child", recordType: nil,
                                                                  fields: ["owner": Body.field(reference, "REFERENCE")])])
        #expect(linked.json.record(0).serverErrorCode == nil, "\(linked.text)")
        let before = try Self.page(server, zoneID: note.sharedZoneID, token: nil, limit: 200, as: ann, database: "shared")
        #expect(before.live.contains("child"))
        let deleted = try server.ownerModify(note, [Body.operation("forceDelete", name: "anchor", recordType: nil)])
        #expect(deleted.json.record(0)["deleted"] == true, "\(deleted.text)")
        let after = try Self.page(server, zoneID: note.sharedZoneID, token: before.token, limit: 200, as: ann, database: "shared")
        #expect(after.deleted.contains("child"), "the participant's feed: \(after)")
        #expect(!after.deleted.contains("anchor"), "a record outside the share is not named to the participant")
        // As for any deletion (T14): what was below the cascaded record is no longer reachable from the root, so it left the share.
        #expect(after.deleted.contains("grandchild"), "the participant's feed: \(after)")
        #expect(try server.sharedLookup(note, ["grandchild"], as: ann).json.record(0).serverErrorCode == "NOT_FOUND")
    }
}
