import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// Zone-wide shares (`cloudkit.zoneshare`): one per zone, found through the zone (CloudKit's
/// `CKRecordZone.share`; issue 14 item 8).
@Suite struct ZoneShareTests {
    /// A zone shared as a whole with `member` (accepted), and an unshared zone beside it.
    struct Scene {
        var server: TestServer
        var note: SharedNote
        var member: Person
        var plainZone: String

        init() throws {
            server = try Shared.server
            let owner = try server.person("owner")
            member = try server.person("member")
            let zone = unique("zonewide")
            plainZone = unique("plain")
            for name in [zone, plainZone] {
                _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(name)]]]]],
                                    as: owner, database: "private")
            }
            let created = try server.post("records/modify", Body.modify([
                Body.operation("create", name: Share.zoneWideRecordName, recordType: Share.recordType, extra: ["participants": [Invite.email(member)]]),
            ], zone: zone), as: owner, database: "private").json
            let guid = try #require(created.record(0)["shortGUID"]?.stringValue, "\(created)")
            note = SharedNote(owner: owner, zone: zone, shareName: Share.zoneWideRecordName, guid: guid,
                              shareTag: created.record(0)["recordChangeTag"]!.stringValue!, rootTag: "", childTag: "")
            try server.accept(note, as: member)
        }
    }

    @Test("a second zone-wide share of the same zone is EXISTS naming the existing share, with it as serverRecord")
    func secondZoneWideShareIsExists() throws {
        let scene = try Scene()
        let again = try scene.server.ownerModify(scene.note, [Body.operation("create", name: Share.zoneWideRecordName, recordType: Share.recordType)])
        let item = again.json.record(0)
        #expect(item.serverErrorCode == "EXISTS", "\(again.text)")
        #expect(item["reason"]?.stringValue?.contains(Share.zoneWideRecordName) == true, "\(item)")
        #expect(item["serverRecord"]?["recordName"]?.stringValue == Share.zoneWideRecordName)
        #expect(item["serverRecord"]?["shortGUID"]?.stringValue == scene.note.guid)
        // The share is unchanged: the member still reads the zone.
        #expect(try scene.server.sharedZones(as: scene.member).contains(scene.note.zone))
    }

    @Test("zones/list and zones/lookup name the zone's share, in the owner's and the participant's database")
    func zonesCarryTheirShare() throws {
        let scene = try Scene()
        let owner = scene.note.owner
        let listed = try scene.server.get("zones/list", token: .some(owner.token), database: "private").json["zones"]?.arrayValue ?? []
        let shared = try #require(listed.first { $0["zoneID"]?["zoneName"]?.stringValue == scene.note.zone })
        #expect(shared["share"]?["recordName"]?.stringValue == Share.zoneWideRecordName)
        #expect(shared["share"]?["zoneID"]?["zoneName"]?.stringValue == scene.note.zone)
        let plain = try #require(listed.first { $0["zoneID"]?["zoneName"]?.stringValue == scene.plainZone })
        #expect(plain["share"] == nil)

        let looked = try scene.server.post("zones/lookup", ["zones": [["zoneName": .string(scene.note.zone)], ["zoneName": .string(scene.plainZone)]]],
                                           as: owner, database: "private").json["zones"]?.arrayValue ?? []
        #expect(looked.first?["share"]?["recordName"]?.stringValue == Share.zoneWideRecordName, "\(looked)")
        #expect(looked.count == 2 && looked[1]["share"] == nil)

        let memberList = try scene.server.get("zones/list", token: .some(scene.member.token), database: "shared").json["zones"]?.arrayValue ?? []
        #expect(memberList.first { $0["zoneID"]?["zoneName"]?.stringValue == scene.note.zone }?["share"]?["recordName"]?.stringValue
                == Share.zoneWideRecordName)
        let memberLookup = try scene.server.post("zones/lookup", ["zones": [scene.note.sharedZoneID]], as: scene.member, database: "shared")
        #expect(memberLookup.json["zones"]?.arrayValue?.first?["share"]?["recordName"]?.stringValue == Share.zoneWideRecordName,
                "\(memberLookup.text)")
    }

    @Test("a zone shared only through a record's share has no zone share")
    func hierarchicalShareIsNotTheZones() throws {
        let server = try Shared.server
        let note = try server.shareNote(owner: try server.person("owner"))
        let looked = try server.post("zones/lookup", ["zones": [["zoneName": .string(note.zone)]]], as: note.owner, database: "private")
        let zone = try #require(looked.json["zones"]?.arrayValue?.first)
        #expect(zone["zoneID"] != nil && zone["share"] == nil, "\(looked.text)")
    }
}
