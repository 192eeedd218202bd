import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// Sharing changes that show in change feeds reach the subscriptions that cover them (issue 14
/// item 7): the owner deleting a share, a participant leaving, the owner deleting a shared zone.
@Suite("Share notifications")
struct ShareNotificationTests {
    /// A shared note with Ann (who acts) and Bob (who stays) accepted, and for each person a
    /// long-poll URL with a database subscription and a subscription to the note's zone.
    struct Scene {
        var server: TestServer
        var note: SharedNote
        var ann: Person
        var bob: Person
        var couriers: [String: String] = [:]

        init() throws {
            server = try Shared.server
            let owner = try server.person("owner")
            ann = try server.person("ann")
            bob = try server.person("bob")
            note = try server.shareNote(owner: owner, participants: [Invite.email(ann, "READ_WRITE"), Invite.email(bob)])
            try server.accept(note, as: ann)
            try server.accept(note, as: bob)
            for person in [owner, ann, bob] {
                let isOwner = person.recordName == owner.recordName
                let database = isOwner ? "private" : "shared"
                let zoneID: JSONValue = isOwner ? ["zoneName": .string(note.zone)] : note.sharedZoneID
                _ = try server.subscribe(["subscriptionID": "db", "subscriptionType": "database"], as: person, database: database)
                _ = try server.subscribe(["subscriptionID": "zone", "subscriptionType": "zone", "zoneID": zoneID], as: person, database: database)
                couriers[person.recordName] = try server.webcourier(as: person)
            }
        }

        var owner: Person { note.owner }

        /// The subscription IDs that fired for `person` within a second or two.
        func fired(for person: Person, expecting count: Int) throws -> Set<String> {
            let got = try server.notifications(at: couriers[person.recordName]!, count: count, seconds: 3)
            return Set(got.compactMap { $0["subscriptionID"]?.stringValue })
        }
    }

    @Test("the owner deleting a share tells the owner's zone and database subscriptions, and the participants' database ones")
    func ownerDeletesShare() throws {
        let scene = try Scene()
        let deleted = try scene.server.ownerModify(scene.note, [Body.operation("forceDelete", name: scene.note.shareName, recordType: nil)])
        #expect(deleted.json.record(0)["deleted"] == true, "\(deleted.text)")
        #expect(try scene.fired(for: scene.owner, expecting: 2) == ["db", "zone"])
        #expect(try scene.fired(for: scene.ann, expecting: 1) == ["db"])
        #expect(try scene.fired(for: scene.bob, expecting: 1) == ["db"])
    }

    @Test("a participant leaving tells the owner's subscriptions, the other participants' zone subscriptions, and the leaver's database one")
    func participantLeaves() throws {
        let scene = try Scene()
        let left = try scene.server.sharedModify(scene.note, [Body.operation("forceDelete", name: scene.note.shareName, recordType: nil)],
                                                 as: scene.ann)
        #expect(left.json.record(0)["deleted"] == true, "\(left.text)")
        #expect(try scene.fired(for: scene.owner, expecting: 2) == ["db", "zone"])
        #expect(try scene.fired(for: scene.bob, expecting: 2) == ["db", "zone"])
        #expect(try scene.fired(for: scene.ann, expecting: 1) == ["db"])
    }

    @Test("a participant deleting the zone from their shared database leaves, and tells the same subscriptions as leaving")
    func participantDeletesSharedZone() throws {
        let scene = try Scene()
        let zones = ["operations": [["operationType": "delete", "zone": ["zoneID": scene.note.sharedZoneID]],
                                    ["operationType": "create", "zone": ["zoneID": scene.note.sharedZoneID]]]] as JSONValue
        let response = try scene.server.post("zones/modify", zones, as: scene.ann, database: "shared")
        let results = response.json["zones"]?.arrayValue ?? []
        #expect(results.first?["deleted"] == true, "\(response.text)")
        #expect(results.last?.serverErrorCode == "BAD_REQUEST", "zones cannot be created in the shared database")
        #expect(try scene.fired(for: scene.owner, expecting: 2) == ["db", "zone"])
        #expect(try scene.fired(for: scene.bob, expecting: 2) == ["db", "zone"])
        #expect(try scene.fired(for: scene.ann, expecting: 1) == ["db"])
        #expect(try !scene.server.sharedZones(as: scene.ann).contains(scene.note.zone))
        #expect(try scene.server.sharedZones(as: scene.bob).contains(scene.note.zone))
    }

    @Test("the owner deleting a shared zone tells the participants' database subscriptions")
    func ownerDeletesSharedZone() throws {
        let scene = try Scene()
        let response = try scene.server.post("zones/modify", ["operations": [["operationType": "delete", "zone": ["zoneID": ["zoneName": .string(scene.note.zone)]]]]],
                                             as: scene.owner, database: "private")
        #expect(response.json["zones"]?.arrayValue?.first?["deleted"] == true, "\(response.text)")
        #expect(try scene.fired(for: scene.owner, expecting: 1).contains("db"))
        #expect(try scene.fired(for: scene.ann, expecting: 1) == ["db"])
        #expect(try scene.fired(for: scene.bob, expecting: 1) == ["db"])
    }
}
