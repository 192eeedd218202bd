import Foundation
import Testing
import TandemCore

/// The rules the server enforces on share records (cloudkit.md §2.1, §2.4; decisions D4–D8),
/// one test per rule, over HTTP.
@Suite("Share rules")
struct ShareRulesTests {
    func firstError(_ response: TestServer.Response) -> String? {
        response.json.serverErrorCode ?? response.json.records.first { $0.serverErrorCode != nil }?.serverErrorCode
    }

    @Test("records in the default zone cannot be shared")
    func defaultZoneRefused() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "n", fields: [:]),
            Body.operation("create", name: "s", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "n"]]),
        ]), as: owner, database: "private")
        #expect(response.json.record(1).serverErrorCode == "BAD_REQUEST")
        #expect(response.json.record(1)["reason"]?.stringValue?.contains("default zone") == true)
    }

    @Test("a new share must be saved in the same request as its root")
    func rootInSameRequest() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        let response = try server.ownerModify(note, [Body.operation("create", name: "s2", recordType: "cloudkit.share",
                                                                    extra: ["forRecord": ["recordName": "child"]])])
        #expect(response.json.record(0).serverErrorCode == "BAD_REQUEST")
    }

    @Test("a record is in at most one share: ALREADY_SHARED for a shared descendant, a nested root, and a zone-wide share over shares")
    func alreadyShared() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        // The child is already in the note's share.
        let child = try server.post("records/lookup", Body.lookup(["child"], zone: note.zone), as: owner, database: "private").json.record(0)
        let second = try server.ownerModify(note, [
            Body.operation("update", name: "child", recordType: nil, tag: child["recordChangeTag"]?.stringValue, fields: ["x": Body.field(1)]),
            Body.operation("create", name: "s2", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "child"]]),
        ])
        #expect(second.json.record(1).serverErrorCode == "ALREADY_SHARED")
        // A zone-wide share cannot join hierarchical shares.
        let zoneWide = try server.ownerModify(note, [Body.operation("create", name: "cloudkit.zoneshare", recordType: "cloudkit.share")])
        #expect(zoneWide.json.record(0).serverErrorCode == "ALREADY_SHARED")
        // A separately shared root cannot be moved under the note.
        let other = try server.ownerModify(note, [
            Body.operation("create", name: "other", fields: [:]),
            Body.operation("create", name: "s3", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "other"]]),
        ])
        #expect(other.json.records.allSatisfy { $0.serverErrorCode == nil })
        let holder = try server.ownerModify(note, [Body.operation("create", name: "holder", fields: [:]),])
        let underHolder = try server.ownerModify(note, [Body.operation("update", name: "other", recordType: nil,
                                                                       tag: other.json.record(0)["recordChangeTag"]?.stringValue,
                                                                       extra: ["parent": ["recordName": "holder"]])])
        #expect(underHolder.json.record(0).serverErrorCode == nil, "a root's own parent is ignored for sharing")
        let holderTag = holder.json.record(0)["recordChangeTag"]?.stringValue
        let moveHolder = try server.ownerModify(note, [Body.operation("update", name: "holder", recordType: nil, tag: holderTag,
                                                                      extra: ["parent": ["recordName": "note"]])])
        #expect(moveHolder.json.record(0).serverErrorCode == "ALREADY_SHARED")
        // In a zone shared as a whole, a record cannot get its own share.
        let zone = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "whole"]]]]],
                                   as: owner, database: "private")
        #expect(zone.status == 200)
        let whole = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "cloudkit.zoneshare", recordType: "cloudkit.share"),
        ], zone: "whole"), as: owner, database: "private")
        #expect(whole.json.record(0).serverErrorCode == nil)
        let nested = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "r", fields: [:]),
            Body.operation("create", name: "rs", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "r"]]),
        ], zone: "whole"), as: owner, database: "private")
        #expect(nested.json.record(1).serverErrorCode == "ALREADY_SHARED")
    }

    @Test("share saves are always version-checked, even with forceUpdate")
    func versionChecked() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        let stale = try server.ownerModify(note, [Body.operation("forceUpdate", name: "share", recordType: nil, tag: "1-1",
                                                                 fields: ["cloudkit.title": Body.field("Renamed")])])
        #expect(stale.json.record(0).serverErrorCode == "CONFLICT")
        #expect(stale.json.record(0)["serverRecord"]?["shortGUID"] == .string(note.guid))
        let fresh = try server.ownerModify(note, [Body.operation("forceUpdate", name: "share", recordType: nil, tag: note.shareTag,
                                                                 fields: ["cloudkit.title": Body.field("Renamed")])])
        #expect(fresh.json.record(0)["fields"]?["cloudkit.title"]?["value"] == "Renamed")
    }

    @Test("participants are added or removed only while publicPermission is NONE; a change drops pending (to NONE: all)")
    func publicPermissionRules() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let accepted = try server.person("accepted")
        let pending = try server.person("pending")
        let late = try server.person("late")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(accepted), Invite.email(pending)])
        try server.accept(note, as: accepted)
        var tag = try server.shareRecord(note, as: owner)["recordChangeTag"]!.stringValue!

        let toPublic = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: tag,
                                                                    extra: ["publicPermission": "READ_ONLY"])])
        let statuses = (toPublic.json.record(0)["participants"]?.arrayValue ?? []).compactMap { $0["acceptanceStatus"]?.stringValue }
        #expect(statuses == ["ACCEPTED", "ACCEPTED"], "the pending invitee is dropped, the accepted one stays")
        #expect(try server.resolve(note, as: pending).json["results"]?.arrayValue?.first?["participantType"] == "PUBLIC_USER")
        tag = toPublic.json.record(0)["recordChangeTag"]!.stringValue!

        let add = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: tag,
                                                               extra: ["participants": [Invite.email(accepted), Invite.email(late)]])])
        #expect(add.json.record(0).serverErrorCode == "BAD_REQUEST")
        let remove = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: tag, extra: ["participants": []])])
        #expect(remove.json.record(0).serverErrorCode == "BAD_REQUEST")

        // Back to NONE drops everyone; people may be re-added in the same save.
        let toPrivate = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: tag,
                                                                     extra: ["publicPermission": "NONE", "participants": [Invite.email(late)]])])
        let people = (toPrivate.json.record(0)["participants"]?.arrayValue ?? []).compactMap { $0["userIdentity"]?["userRecordName"]?.stringValue }
        #expect(people == [owner.recordName, late.recordName])
        #expect(try server.sharedLookup(note, ["note"], as: accepted).json.serverErrorCode == "ZONE_NOT_FOUND")
    }

    @Test("PUBLIC_USER participants cannot be added by the owner")
    func noPublicUsersByHand() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let someone = try server.person("someone")
        let note = try server.shareNote(owner: owner)
        let response = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                                                    extra: ["participants": [Invite.email(someone, type: "PUBLIC_USER")]])])
        #expect(response.json.record(0).serverErrorCode == "BAD_REQUEST")
    }

    @Test("the share URL is stable per root: sharing the same root again gives the same URL")
    func stableURL() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        let stop = try server.ownerModify(note, [Body.operation("delete", name: "share", recordType: nil, tag: note.shareTag)])
        #expect(stop.json.record(0)["deleted"] == true)
        let root = try server.post("records/lookup", Body.lookup(["note"], zone: note.zone), as: owner, database: "private").json.record(0)
        #expect(root["share"] == nil, "the root forgets a deleted share")
        let again = try server.ownerModify(note, [
            Body.operation("update", name: "note", recordType: nil, tag: root["recordChangeTag"]?.stringValue, fields: [:]),
            Body.operation("create", name: "share-again", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "note"]]),
        ])
        #expect(again.json.record(1)["shortGUID"] == .string(note.guid))
        #expect(again.json.record(0)["share"]?["recordName"] == "share-again")
        #expect(again.json.record(1)["url"]?.stringValue?.hasSuffix("/share/\(note.guid)") == true)
    }

    @Test("an invitee without an account stays INVITED and is matched when they sign up with that email")
    func inviteeSignsUpLater() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let email = "\(unique("later").lowercased())@example.com"
        let stranger = try server.person("stranger")
        let note = try server.shareNote(owner: owner, participants: [Invite.address(email, "READ_WRITE")])
        let share = try server.shareRecord(note, as: owner)
        let invitee = (share["participants"]?.arrayValue ?? []).last
        #expect(invitee?["acceptanceStatus"] == "INVITED")
        #expect(invitee?["userIdentity"]?["hasiCloudAccount"] == false)
        // Someone else holding the URL is told an invitation may be theirs to verify, with the contact masked.
        let resolved = try server.resolve(note, as: stranger).json["results"]?.arrayValue?.first ?? .null
        let contact = resolved["potentialMatchList"]?.arrayValue?.first?["contactInformation"]?["emailAddress"]?.stringValue
        #expect(contact?.contains("•••@example.com") == true)
        #expect(resolved["share"] == nil)

        let recordName = try TestServer.admin(["user", "add", "--email", email, "--data", server.dataDirectory])
        let token = try TestServer.admin(["token", "create", "--user", email, "--data", server.dataDirectory])
        let newcomer = Person(recordName: recordName, email: email, token: token)
        #expect(try server.accept(note, as: newcomer)["participantStatus"] == "ACCEPTED")
        #expect(try server.sharedLookup(note, ["note"], as: newcomer).json.record(0).serverErrorCode == nil)
    }

    @Test("an invitation by phone number is matched when an account with that number appears")
    func inviteeByPhone() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let digits = String(Int.random(in: 1_000_000...9_999_999))
        let note = try server.shareNote(owner: owner, participants: [
            ["userIdentity": ["lookupInfo": ["phoneNumber": .string("+1 (555) \(digits.prefix(3))-\(digits.dropFirst(3))")]], "permission": "READ_ONLY"],
        ])
        let later = try server.person("phone", phone: "+1555\(digits)")
        #expect(try server.accept(note, as: later)["participantStatus"] == "ACCEPTED")
        #expect(try server.sharedLookup(note, ["child"], as: later).json.record(0).serverErrorCode == nil)
    }

    @Test("a parent chain cannot loop, and a participant cannot move a record out of the share")
    func parentRules() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let writer = try server.person("writer")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(writer, "READ_WRITE")])
        try server.accept(note, as: writer)
        let root = try server.post("records/lookup", Body.lookup(["note"], zone: note.zone), as: owner, database: "private").json.record(0)
        _ = root
        let loop = try server.ownerModify(note, [Body.operation("create", name: "outside", fields: [:])])
        let outsideTag = loop.json.record(0)["recordChangeTag"]?.stringValue
        let grandchild = try server.ownerModify(note, [Body.operation("create", name: "grandchild", fields: [:], extra: ["parent": ["recordName": "child"]])])
        #expect(grandchild.json.record(0).serverErrorCode == nil)
        let child = try server.post("records/lookup", Body.lookup(["child"], zone: note.zone), as: owner, database: "private").json.record(0)
        let cycle = try server.ownerModify(note, [Body.operation("update", name: "child", recordType: nil, tag: child["recordChangeTag"]?.stringValue,
                                                                 extra: ["parent": ["recordName": "grandchild"]])])
        #expect(cycle.json.record(0).serverErrorCode == "BAD_REQUEST")
        _ = outsideTag
        let escape = try server.sharedModify(note, [Body.operation("update", name: "child", recordType: nil, tag: child["recordChangeTag"]?.stringValue,
                                                                   extra: ["parent": ["recordName": "outside"]])], as: writer)
        #expect(escape.json.record(0).serverErrorCode == "VALIDATING_REFERENCE_ERROR", "a record outside the share does not exist for the writer")
        let noParent = try server.sharedModify(note, [Body.operation("create", name: "orphan", fields: [:])], as: writer)
        #expect(noParent.json.record(0).serverErrorCode == "ACCESS_DENIED")
    }

    @Test("a share takes at most the configured number of participants (D8): TOO_MANY_PARTICIPANTS")
    func participantLimit() throws {
        let server = try TestServer()
        try server.start(extraArguments: ["--participant-limit", "3", "--quiet"])
        let owner = try server.person("owner")
        let people = try (0..<3).map { try server.person("p\($0)") }
        let zone = unique("limit")
        _ = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                            as: owner, database: "private")
        let tooMany = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "n", fields: [:]),
            Body.operation("create", name: "s", recordType: "cloudkit.share",
                           extra: ["forRecord": ["recordName": "n"], "participants": .array(people.map { Invite.email($0) })]),
        ], zone: zone, atomic: false), as: owner, database: "private")
        #expect(tooMany.json.record(1).serverErrorCode == "TOO_MANY_PARTICIPANTS")
        #expect(tooMany.status == 200)
        // Public users count too.
        let open = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "s", recordType: "cloudkit.share",
                           extra: ["forRecord": ["recordName": "n"], "publicPermission": "READ_ONLY"]),
            Body.operation("update", name: "n", recordType: nil, tag: tooMany.json.record(0)["recordChangeTag"]?.stringValue, fields: [:]),
        ], zone: zone), as: owner, database: "private")
        let guid = try #require(open.json.record(0)["shortGUID"]?.stringValue)
        let note = SharedNote(owner: owner, zone: zone, shareName: "s", guid: guid, shareTag: "", rootTag: "", childTag: "")
        #expect(try server.accept(note, as: people[0])["participantStatus"] == "ACCEPTED")
        #expect(try server.accept(note, as: people[1])["participantStatus"] == "ACCEPTED")
        #expect(try server.accept(note, as: people[2]).serverErrorCode == "TOO_MANY_PARTICIPANTS")
    }

    @Test("bad share input gets a clear BAD_REQUEST and writes nothing")
    func badInput() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let zone = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "bad"]]]]],
                                   as: owner, database: "private")
        #expect(zone.status == 200)
        let cases: [(JSONObject, String)] = [
            (["publicPermission": "EVERYONE"], "publicPermission"),
            (["participants": "bob"], "participants"),
            (["participants": [["userIdentity": ["lookupInfo": ["emailAddress": "not-an-email"]]]]], "emailAddress"),
            (["participants": [["userIdentity": ["lookupInfo": [:]]]]], "lookupInfo"),
            (["participants": [["userIdentity": ["lookupInfo": ["emailAddress": "a@b.co"]], "permission": "NONE"]]], "permission"),
            (["allowsAccessRequests": "yes"], "allowsAccessRequests"),
            (["forRecord": "n"], "forRecord"),
        ]
        for (extra, word) in cases {
            var keys = extra
            if keys["forRecord"] == nil { keys["forRecord"] = ["recordName": "n"] }
            let response = try server.post("records/modify", Body.modify([
                Body.operation("create", name: "n", fields: [:]),
                Body.operation("create", name: "s", recordType: "cloudkit.share", extra: keys),
            ], zone: "bad"), as: owner, database: "private")
            #expect(response.status == 400, "\(word): \(response.text)")
            #expect(response.json["reason"]?.stringValue?.contains(word) == true, "\(word): \(response.text)")
        }
        let lookup = try server.post("records/lookup", Body.lookup(["n", "s"], zone: "bad"), as: owner, database: "private").json
        #expect(lookup.records.allSatisfy { $0.serverErrorCode == "NOT_FOUND" })
        // Share keys on an ordinary record.
        let misplaced = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "n", fields: [:], extra: ["publicPermission": "READ_ONLY"]),
        ], zone: "bad"), as: owner, database: "private")
        #expect(misplaced.status == 400)
    }
}
