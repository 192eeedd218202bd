import Foundation
import Testing
import TandemCore

/// The shared database's feeds are per viewer (DESIGN.md §4; decisions D3).
@Suite("Shared feeds")
struct SharedFeedTests {
    @Test("two participants in different shares of one owner zone never see each other's records, not even as tombstones")
    func privacy() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let ann = try server.person("ann")
        let ben = try server.person("ben")
        let zone = unique("split")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        func shareRoot(_ root: String, with person: Person) throws -> String {
            let response = try server.post("records/modify", Body.modify([
                Body.operation("create", name: root, recordType: "Item", fields: ["n": Body.field(0)]),
                Body.operation("create", name: "\(root)-share", recordType: "cloudkit.share",
                               extra: ["forRecord": ["recordName": .string(root)], "participants": [Invite.email(person, "READ_WRITE")]]),
            ], zone: zone), as: owner, database: "private")
            return response.json.record(1)["shortGUID"]!.stringValue!
        }
        let annGUID = try shareRoot("a-root", with: ann)
        let benGUID = try shareRoot("b-root", with: ben)
        let annNote = SharedNote(owner: owner, zone: zone, shareName: "a-root-share", guid: annGUID, shareTag: "", rootTag: "", childTag: "")
        let benNote = SharedNote(owner: owner, zone: zone, shareName: "b-root-share", guid: benGUID, shareTag: "", rootTag: "", childTag: "")
        try server.accept(annNote, as: ann)
        try server.accept(benNote, as: ben)
        let sharedZone = annNote.sharedZoneID
        var annMirror = ZoneMirror()
        var benMirror = ZoneMirror()
        try annMirror.catchUp(server, zoneID: sharedZone, as: ann, database: "shared")
        try benMirror.catchUp(server, zoneID: sharedZone, as: ben, database: "shared")

        // Writes under each root, deletions, and a record moving from Ann's share to Ben's.
        var operations: [JSONValue] = []
        for i in 0..<20 {
            operations.append(Body.operation("create", name: "a-\(i)", recordType: "Item", fields: ["n": Body.field(.int(Int64(i)))],
                                             extra: ["parent": ["recordName": "a-root"]]))
            operations.append(Body.operation("create", name: "b-\(i)", recordType: "Item", fields: ["n": Body.field(.int(Int64(i)))],
                                             extra: ["parent": ["recordName": "b-root"]]))
        }
        operations.append(Body.operation("create", name: "loose", recordType: "Item", fields: ["n": Body.field(99)]))
        let created = try server.post("records/modify", Body.modify(operations, zone: zone), as: owner, database: "private").json
        let tags = Dictionary(uniqueKeysWithValues: created.records.map { ($0["recordName"]!.stringValue!, $0["recordChangeTag"]!.stringValue!) })
        _ = try server.post("records/modify", Body.modify([
            Body.operation("delete", name: "a-0", recordType: nil, tag: tags["a-0"]),
            Body.operation("delete", name: "b-0", recordType: nil, tag: tags["b-0"]),
            Body.operation("update", name: "a-1", recordType: nil, tag: tags["a-1"], extra: ["parent": ["recordName": "b-root"]]),
            Body.operation("delete", name: "loose", recordType: nil, tag: tags["loose"]),
        ], zone: zone), as: owner, database: "private")

        /// Every record name the feed shows `person` after `token`, in pages of 7.
        func namesSeen(by person: Person, after token: String?) throws -> Set<String> {
            var token = token
            var names = Set<String>()
            while true {
                var entry: JSONObject = ["zoneID": sharedZone]
                if let token { entry["syncToken"] = .string(token) }
                let zoneResult = try server.post("changes/zone", ["zones": [.object(entry)], "resultsLimit": 7], as: person, database: "shared")
                    .json["zones"]?.arrayValue?.first ?? .null
                for record in zoneResult["records"]?.arrayValue ?? [] { names.insert(record["recordName"]!.stringValue!) }
                token = zoneResult["syncToken"]?.stringValue
                if zoneResult["moreComing"] != true { return names }
            }
        }
        let annSeen = try namesSeen(by: ann, after: annMirror.token)
        let benSeen = try namesSeen(by: ben, after: benMirror.token)
        #expect(annSeen.allSatisfy { $0.hasPrefix("a-") }, "Ann saw \(annSeen.sorted())")
        #expect(benSeen.allSatisfy { $0.hasPrefix("b-") || $0 == "a-1" }, "Ben saw \(benSeen.sorted())")
        #expect(annSeen.contains("a-0") && annSeen.contains("a-1"), "Ann sees her deletion and the record that left her share")
        #expect(benSeen.contains("a-1") && benSeen.contains("b-0"))
        #expect(annSeen.contains("loose") == false && benSeen.contains("loose") == false)

        // Applied as a sync engine would, each mirror equals what the participant can query.
        try annMirror.catchUp(server, zoneID: sharedZone, as: ann, database: "shared", limit: 5)
        try benMirror.catchUp(server, zoneID: sharedZone, as: ben, database: "shared", limit: 5)
        let annTruth = try server.currentState(zone: sharedZone, as: ann, database: "shared")
        let benTruth = try server.currentState(zone: sharedZone, as: ben, database: "shared")
        #expect(annMirror.summary == annTruth)
        #expect(benMirror.summary == benTruth)
        #expect(annTruth["a-1"] == nil && benTruth["a-1"] != nil)
    }

    @Test("loss of access: leave, removal, stop sharing and zone deletion each reach the affected participant's database feed with its reason, and nobody else's")
    func lossOfAccess() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let people = try (0..<4).map { try server.person("p\($0)") }
        // Zone 1 (zone-wide): people 0 and 1. Zone 2 (hierarchical): people 2 and 3.
        let zone1 = unique("lost1")
        let zone2 = unique("lost2")
        for zone in [zone1, zone2] {
            _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                as: owner, database: "private")
        }
        let made = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "cloudkit.zoneshare", recordType: "cloudkit.share",
                           extra: ["participants": [Invite.email(people[0], "READ_WRITE"), Invite.email(people[1], "READ_WRITE")]]),
        ], zone: zone1), as: owner, database: "private")
        let guid = try #require(made.json.record(0)["shortGUID"]?.stringValue, "\(made.status) \(made.text)")
        let note1 = SharedNote(owner: owner, zone: zone1, shareName: "cloudkit.zoneshare", guid: guid, shareTag: "", rootTag: "", childTag: "")
        let note2 = try server.shareNote(owner: owner, participants: [Invite.email(people[2]), Invite.email(people[3])])
        try server.accept(note1, as: people[0])
        try server.accept(note1, as: people[1])
        try server.accept(note2, as: people[2])
        try server.accept(note2, as: people[3])
        var tokens = try people.map { try server.databaseFeed(as: $0, database: "shared", token: nil).token }
        var ownerToken = try server.databaseFeed(as: owner, database: "private", token: nil).token

        /// Each person's database-feed entries since their last token: zone name → reason ("live" when not deleted).
        func drain() throws -> [[String: String]] {
            try people.indices.map { index in
                let feed = try server.databaseFeed(as: people[index], database: "shared", token: tokens[index])
                tokens[index] = feed.token
                var seen: [String: String] = [:]
                for zone in feed.zones {
                    seen[zone["zoneID"]!["zoneName"]!.stringValue!] = zone["deleted"] == true ? zone["reason"]?.stringValue ?? "?" : "live"
                }
                return seen
            }
        }
        _ = try drain()

        // people[0] leaves.
        let shareTag = try #require(try server.shareRecord(note1, as: people[0])["recordChangeTag"]?.stringValue)
        _ = try server.sharedModify(note1, [Body.operation("delete", name: "cloudkit.zoneshare", recordType: nil, tag: shareTag)], as: people[0])
        var seen = try drain()
        #expect(seen[0] == [zone1: "ACCESS_LOST"])
        #expect(seen[1][zone1] == "live", "the share record changed for the one who stays")
        #expect(seen[2].isEmpty && seen[3].isEmpty)

        // The owner removes people[2] from the hierarchical share.
        let share2 = try server.shareRecord(note2, as: owner)
        _ = try server.ownerModify(note2, [Body.operation("update", name: note2.shareName, recordType: nil, tag: share2["recordChangeTag"]?.stringValue,
                                                          extra: ["participants": [Invite.email(people[3])]])])
        seen = try drain()
        #expect(seen[2] == [note2.zone: "ACCESS_LOST"])
        #expect(seen[3][note2.zone] == "live")
        #expect(seen[0].isEmpty && seen[1].isEmpty)

        // The owner stops sharing zone 1 (people[1] loses it).
        let wideTag = try server.shareRecord(note1, as: owner)["recordChangeTag"]!.stringValue!
        _ = try server.ownerModify(note1, [Body.operation("delete", name: "cloudkit.zoneshare", recordType: nil, tag: wideTag)])
        seen = try drain()
        #expect(seen[1] == [zone1: "ACCESS_LOST"])
        #expect(seen[0].isEmpty && seen[2].isEmpty && seen[3].isEmpty)

        // The owner deletes zone 2 (people[3] still had it).
        _ = try server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": .string(note2.zone)]]]]],
                            as: owner, database: "private")
        seen = try drain()
        #expect(seen[3] == [note2.zone: "DELETED"])
        #expect(seen[0].isEmpty && seen[1].isEmpty && seen[2].isEmpty, "people[2] already lost it")
        let ownerFeed = try server.databaseFeed(as: owner, database: "private", token: ownerToken)
        ownerToken = ownerFeed.token
        let ownerDeleted = ownerFeed.zones.filter { $0["deleted"] == true }.compactMap { $0["zoneID"]?["zoneName"]?.stringValue }
        #expect(ownerDeleted == [note2.zone])
    }

    @Test("a participant's zone token expires when their shares in the zone change")
    func tokenExpiresWhenSharesChange() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let pat = try server.person("pat")
        let sam = try server.person("sam")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(pat), Invite.email(sam)])
        try server.accept(note, as: pat)
        try server.accept(note, as: sam)
        var mirror = ZoneMirror()
        #expect(try mirror.catchUp(server, zoneID: note.sharedZoneID, as: pat, database: "shared") == nil)
        #expect(Set(mirror.records.keys) == ["note", "child", "share"])
        // A second share in the same zone, also accepted: the old token no longer describes what Pat sees.
        let second = try server.ownerModify(note, [
            Body.operation("create", name: "other", fields: [:]),
            Body.operation("create", name: "other-share", recordType: "cloudkit.share",
                           extra: ["forRecord": ["recordName": "other"], "participants": [Invite.email(pat)]]),
        ]).json
        let guid = second.record(1)["shortGUID"]!.stringValue!
        try server.accept(SharedNote(owner: owner, zone: note.zone, shareName: "other-share", guid: guid, shareTag: "", rootTag: "", childTag: ""), as: pat)
        var copy = mirror
        #expect(try copy.catchUp(server, zoneID: note.sharedZoneID, as: pat, database: "shared") == "CHANGE_TOKEN_EXPIRED")
        var fresh = ZoneMirror()
        #expect(try fresh.catchUp(server, zoneID: note.sharedZoneID, as: pat, database: "shared") == nil)
        #expect(Set(fresh.records.keys) == ["note", "child", "share", "other", "other-share"])
        // Another participant of the same share cannot use Pat's token.
        let stolen = try server.post("changes/zone", ["zones": [["zoneID": note.sharedZoneID, "syncToken": .string(fresh.token!)]]], as: sam, database: "shared")
        #expect(stolen.json["zones"]?.arrayValue?.first?.serverErrorCode == "BAD_REQUEST")
    }
}
