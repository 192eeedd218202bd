import Foundation
import Testing
import TandemCore

/// The end-to-end sharing scenarios of issue 3, each over HTTP against a real server with real
/// users (made by the `tandem` CLI).
@Suite("Sharing scenarios")
struct SharingScenarioTests {
    @Test("1: invite by email, accept, edit through the shared database, owner sees it, stale owner edit conflicts")
    func inviteAcceptEdit() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let bob = try server.person("bob")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(bob, "READ_WRITE")])

        let resolved = try server.resolve(note, as: bob, fetchRoot: true).json["results"]?.arrayValue?.first ?? .null
        #expect(resolved["participantStatus"] == "INVITED")
        #expect(resolved["participantPermission"] == "READ_WRITE")
        #expect(resolved["participantType"] == "USER")
        #expect(resolved["rootRecordName"] == "note")
        #expect(resolved["rootRecord"]?["fields"]?["title"]?["value"] == "Groceries")
        #expect(resolved["ownerIdentity"]?["userRecordName"] == .string(owner.recordName))
        #expect(try server.sharedZones(as: bob).contains(note.zone) == false)

        let accepted = try server.accept(note, as: bob)
        #expect(accepted["participantStatus"] == "ACCEPTED")
        #expect(try server.sharedZones(as: bob).contains(note.zone))

        let fetched = try server.sharedLookup(note, ["note", "child"], as: bob).json
        #expect(fetched.record(0)["fields"]?["title"]?["value"] == "Groceries")
        #expect(fetched.record(1)["fields"]?["title"]?["value"] == "Milk")
        let tag = fetched.record(0)["recordChangeTag"]!.stringValue!
        let edit = try server.sharedModify(note, [Body.operation("update", name: "note", recordType: nil, tag: tag,
                                                                 fields: ["title": Body.field("Groceries for Sunday")])], as: bob)
        #expect(edit.status == 200)
        #expect(edit.json.record(0)["modified"]?["userRecordName"] == .string(bob.recordName))

        let seen = try server.post("records/lookup", Body.lookup(["note"], zone: note.zone), as: owner, database: "private").json.record(0)
        #expect(seen["fields"]?["title"]?["value"] == "Groceries for Sunday")

        let stale = try server.ownerModify(note, [Body.operation("update", name: "note", recordType: nil, tag: tag,
                                                                 fields: ["title": Body.field("Old idea")])]).json.record(0)
        #expect(stale.serverErrorCode == "CONFLICT")
        #expect(stale["serverRecord"]?["fields"]?["title"]?["value"] == "Groceries for Sunday")
    }

    @Test("2: a public READ_ONLY link: a third user joins as PUBLIC_USER, reads, cannot write")
    func publicReadOnlyLink() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let carol = try server.person("carol")
        let note = try server.shareNote(owner: owner, publicPermission: "READ_ONLY")

        let resolved = try server.resolve(note, as: carol).json["results"]?.arrayValue?.first ?? .null
        #expect(resolved["participantType"] == "PUBLIC_USER")
        #expect(resolved["participantPermission"] == "READ_ONLY")
        let accepted = try server.accept(note, as: carol)
        #expect(accepted["participantType"] == "PUBLIC_USER")
        #expect(accepted["participantStatus"] == "ACCEPTED")

        #expect(try server.sharedLookup(note, ["child"], as: carol).json.record(0)["fields"]?["title"]?["value"] == "Milk")
        let write = try server.sharedModify(note, [Body.operation("update", name: "child", recordType: nil, tag: note.childTag,
                                                                  fields: ["title": Body.field("Oat milk")])], as: carol)
        #expect(write.json.record(0).serverErrorCode == "ACCESS_DENIED")
        let create = try server.sharedModify(note, [Body.operation("create", name: "extra", fields: [:], extra: ["parent": ["recordName": "note"]])], as: carol)
        #expect(create.json.record(0).serverErrorCode == "ACCESS_DENIED")
        // The owner sees Carol on the share.
        let share = try server.shareRecord(note, as: owner)
        let types = (share["participants"]?.arrayValue ?? []).compactMap { $0["type"]?.stringValue }
        #expect(types == ["OWNER", "PUBLIC_USER"])
    }

    @Test("3: zone-wide share with three participants: one leaves, one is removed, then sharing stops")
    func zoneWideShareLifecycle() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let people = try (0..<3).map { try server.person("member\($0)") }
        let zone = unique("zonewide")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        let created = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "a", fields: ["title": Body.field("A")]),
            Body.operation("create", name: "cloudkit.zoneshare", recordType: "cloudkit.share",
                           extra: ["participants": .array(people.map { Invite.email($0, "READ_WRITE") })]),
        ], zone: zone), as: owner, database: "private").json
        let guid = try #require(created.record(1)["shortGUID"]?.stringValue)
        var note = SharedNote(owner: owner, zone: zone, shareName: "cloudkit.zoneshare", guid: guid,
                              shareTag: created.record(1)["recordChangeTag"]!.stringValue!, rootTag: "", childTag: "")
        for person in people { #expect(try server.accept(note, as: person)["participantStatus"] == "ACCEPTED") }
        for person in people { #expect(try server.sharedLookup(note, ["a"], as: person).json.record(0)["recordName"] == "a") }
        // Records created later are in the zone-wide share too.
        _ = try server.ownerModify(note, [Body.operation("create", name: "b", fields: [:])])
        #expect(try server.sharedLookup(note, ["b"], as: people[0]).json.record(0).serverErrorCode == nil)

        // people[0] leaves by deleting the share in their shared database (D5).
        let shareTag = try server.shareRecord(note, as: people[0])["recordChangeTag"]!.stringValue!
        let leave = try server.sharedModify(note, [Body.operation("delete", name: "cloudkit.zoneshare", recordType: nil, tag: shareTag)], as: people[0])
        #expect(leave.json.record(0)["deleted"] == true)
        #expect(try server.sharedZones(as: people[0]).contains(zone) == false)
        #expect(try server.sharedLookup(note, ["a"], as: people[0]).json.serverErrorCode == "ZONE_NOT_FOUND")
        #expect(try server.sharedLookup(note, ["a"], as: people[1]).json.record(0).serverErrorCode == nil)

        // The owner removes people[1] by saving the share without them.
        let ownerView = try server.shareRecord(note, as: owner)
        note.shareTag = ownerView["recordChangeTag"]!.stringValue!
        let remove = try server.ownerModify(note, [Body.operation("update", name: "cloudkit.zoneshare", recordType: nil, tag: note.shareTag,
                                                                  extra: ["participants": [Invite.email(people[2], "READ_WRITE")]])])
        #expect(remove.json.record(0).serverErrorCode == nil)
        #expect(try server.sharedLookup(note, ["a"], as: people[1]).json.serverErrorCode == "ZONE_NOT_FOUND")
        #expect(try server.sharedLookup(note, ["a"], as: people[2]).json.record(0).serverErrorCode == nil)

        // The owner stops sharing.
        note.shareTag = remove.json.record(0)["recordChangeTag"]!.stringValue!
        let stop = try server.ownerModify(note, [Body.operation("delete", name: "cloudkit.zoneshare", recordType: nil, tag: note.shareTag)])
        #expect(stop.json.record(0)["deleted"] == true)
        #expect(try server.sharedLookup(note, ["a"], as: people[2]).json.serverErrorCode == "ZONE_NOT_FOUND")
        #expect(try server.sharedZones(as: people[2]).contains(zone) == false)
        // The owner's records are untouched.
        #expect(try server.post("records/lookup", Body.lookup(["a", "b"], zone: zone), as: owner, database: "private").json.records.count == 2)
    }

    @Test("4: a subtree of 1,000 records moved into and out of a shared hierarchy: access follows")
    func subtreeMovesInAndOut() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let dana = try server.person("dana")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(dana)])
        try server.accept(note, as: dana)
        // A tree of 1,000 records under "box": record i's parent is box-(i/2), so the tree is 10 levels deep.
        let names = (0..<1000).map { "box-\($0)" }
        for batch in stride(from: 0, to: names.count, by: 200) {
            let operations: [JSONValue] = (batch..<min(batch + 200, names.count)).map { index in
                Body.operation("create", name: names[index], fields: ["n": Body.field(.int(Int64(index)))],
                               extra: index == 0 ? [:] : ["parent": ["recordName": .string(names[index / 2])]])
            }
            let response = try server.ownerModify(note, operations)
            #expect(response.json.records.allSatisfy { $0.serverErrorCode == nil })
        }
        let sample = ["box-0", "box-1", "box-500", "box-999"]
        #expect(try server.sharedLookup(note, sample, as: dana).json.records.allSatisfy { $0.serverErrorCode == "NOT_FOUND" })

        let box = try server.post("records/lookup", Body.lookup(["box-0"], zone: note.zone), as: owner, database: "private").json.record(0)
        let moveIn = try server.ownerModify(note, [Body.operation("update", name: "box-0", recordType: nil, tag: box["recordChangeTag"]?.stringValue,
                                                                  extra: ["parent": ["recordName": "note"]])])
        #expect(moveIn.json.record(0).serverErrorCode == nil)
        let inside = try server.sharedLookup(note, Array(names.suffix(200)), as: dana).json.records
        #expect(inside.count == 200 && inside.allSatisfy { $0.serverErrorCode == nil })
        let query = try server.post("records/query", ["zoneID": note.sharedZoneID, "query": ["recordType": "Note", "filterBy": [
            ["comparator": "GREATER_THAN_OR_EQUALS", "fieldName": "n", "fieldValue": ["value": 990]]]]], as: dana, database: "shared").json
        #expect(query.records.count == 10)

        let moveOut = try server.ownerModify(note, [Body.operation("update", name: "box-0", recordType: nil,
                                                                   tag: moveIn.json.record(0)["recordChangeTag"]?.stringValue,
                                                                   extra: ["parent": .null])])
        #expect(moveOut.json.record(0).serverErrorCode == nil)
        #expect(try server.sharedLookup(note, sample, as: dana).json.records.allSatisfy { $0.serverErrorCode == "NOT_FOUND" })
        let after = try server.post("records/query", ["zoneID": note.sharedZoneID, "query": ["recordType": "Note", "filterBy": [
            ["comparator": "GREATER_THAN_OR_EQUALS", "fieldName": "n", "fieldValue": ["value": 990]]]]], as: dana, database: "shared").json
        #expect(after.records.isEmpty)
        #expect(try server.sharedLookup(note, ["note", "child"], as: dana).json.records.allSatisfy { $0.serverErrorCode == nil })
    }

    @Test("5: access requests: request, approve, accept; a blocked stranger cannot ask again; an invitee is told to accept")
    func accessRequests() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let stranger = try server.person("stranger")
        let pest = try server.person("pest")
        let invitee = try server.person("invitee")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(invitee)], extraShareKeys: ["allowsAccessRequests": true])
        let body: JSONValue = ["shortGUIDs": [["value": .string(note.guid)]]]

        #expect(try server.tandem("shares/requestAccess", body, as: stranger).json["results"]?.arrayValue?.first?["status"] == "REQUESTED")
        let requesters = try server.shareRecord(note, as: owner)["requesters"]?.arrayValue ?? []
        #expect(requesters.compactMap { $0["userRecordName"]?.stringValue } == [stranger.recordName])

        let approved = try server.tandem("shares/approveRequesters", ["shortGUID": .string(note.guid),
                                                                      "userRecordNames": [.string(stranger.recordName)], "permission": "READ_WRITE"], as: owner)
        #expect(approved.status == 200)
        let added = (approved.json["share"]?["participants"]?.arrayValue ?? []).first { $0["userIdentity"]?["userRecordName"] == .string(stranger.recordName) }
        #expect(added?["isApprovedRequester"] == true)
        #expect(added?["acceptanceStatus"] == "INVITED")
        #expect(try server.accept(note, as: stranger)["participantStatus"] == "ACCEPTED")
        #expect(try server.sharedLookup(note, ["note"], as: stranger).json.record(0).serverErrorCode == nil)

        #expect(try server.tandem("shares/requestAccess", body, as: pest).json["results"]?.arrayValue?.first?["status"] == "REQUESTED")
        let blocked = try server.tandem("shares/blockRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(pest.recordName)]], as: owner)
        #expect((blocked.json["share"]?["blockedIdentities"]?.arrayValue ?? []).count == 1)
        #expect(try server.tandem("shares/requestAccess", body, as: pest).json["results"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND")
        _ = try server.tandem("shares/unblockIdentities", ["shortGUID": .string(note.guid), "userRecordNames": [.string(pest.recordName)]], as: owner)
        #expect(try server.tandem("shares/requestAccess", body, as: pest).json["results"]?.arrayValue?.first?["status"] == "REQUESTED")

        #expect(try server.tandem("shares/requestAccess", body, as: invitee).json["results"]?.arrayValue?.first?.serverErrorCode == "PARTICIPANT_ALREADY_INVITED")

        // Denying drops the request; the person may ask again.
        let denied = try server.tandem("shares/denyRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(pest.recordName)]], as: owner)
        #expect(denied.json["share"]?["requesters"] == .array([]))
        #expect(try server.tandem("shares/requestAccess", body, as: pest).json["results"]?.arrayValue?.first?["status"] == "REQUESTED")
        // Approving someone who did not ask is refused.
        let unasked = try server.tandem("shares/approveRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(invitee.recordName)]], as: owner)
        #expect(unasked.json.serverErrorCode == "BAD_REQUEST")
        // Requests by share URL work as well as by shortGUID.
        let other = try server.person("other")
        let byURL = try server.tandem("shares/requestAccess", ["shareURLs": [.string("\(server.baseURL)/share/\(note.guid)")]], as: other)
        #expect(byURL.json["results"]?.arrayValue?.first?["status"] == "REQUESTED")
    }

    @Test("6: an administrator adds a participant and changes a permission, but cannot delete the root")
    func administrator() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let admin = try server.person("admin")
        let user = try server.person("user")
        let newcomer = try server.person("newcomer")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(admin, "READ_WRITE", type: "ADMINISTRATOR"),
                                                                     Invite.email(user, "READ_ONLY")])
        try server.accept(note, as: admin)
        try server.accept(note, as: user)

        let share = try server.shareRecord(note, as: admin)
        let tag = try #require(share["recordChangeTag"]?.stringValue)
        let update = try server.sharedModify(note, [Body.operation("update", name: note.shareName, recordType: nil, tag: tag, extra: [
            "participants": [Invite.email(admin, "READ_WRITE", type: "ADMINISTRATOR"), Invite.email(user, "READ_WRITE"), Invite.email(newcomer)],
        ])], as: admin)
        #expect(update.json.record(0).serverErrorCode == nil)
        let participants = update.json.record(0)["participants"]?.arrayValue ?? []
        let byName = Dictionary(participants.compactMap { p in p["userIdentity"]?["userRecordName"]?.stringValue.map { ($0, p) } },
                                uniquingKeysWith: { a, _ in a })
        #expect(byName[user.recordName]?["permission"] == "READ_WRITE")
        #expect(byName[newcomer.recordName]?["acceptanceStatus"] == "INVITED")
        #expect(try server.accept(note, as: newcomer)["participantStatus"] == "ACCEPTED")

        // The user's new permission holds at once.
        let edit = try server.sharedModify(note, [Body.operation("update", name: "child", recordType: nil, tag: note.childTag,
                                                                 fields: ["title": Body.field("Bread")])], as: user)
        #expect(edit.json.record(0).serverErrorCode == nil)

        let root = try server.sharedLookup(note, ["note"], as: admin).json.record(0)
        let delete = try server.sharedModify(note, [Body.operation("delete", name: "note", recordType: nil, tag: root["recordChangeTag"]?.stringValue)], as: admin)
        #expect(delete.json.record(0).serverErrorCode == "ACCESS_DENIED")
        let newTag = try #require(try server.shareRecord(note, as: admin)["recordChangeTag"]?.stringValue)
        let publicChange = try server.sharedModify(note, [Body.operation("update", name: note.shareName, recordType: nil, tag: newTag,
                                                                         extra: ["publicPermission": "READ_WRITE"])], as: admin)
        #expect(publicChange.json.record(0).serverErrorCode == "ACCESS_DENIED")
    }
}
