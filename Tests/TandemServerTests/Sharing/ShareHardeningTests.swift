import Foundation
import Testing
import TandemCore

/// Regressions for what an adversarial review of sharing found (see the issue notes): leaks of
/// existence, references across the share boundary, shares inside shares, round trips.
@Suite("Share hardening")
struct ShareHardeningTests {
    @Test("a private share and no share at all answer strangers identically (resolve, accept, requestAccess, approve, landing page)")
    func noExistenceOracle() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let stranger = try server.person("stranger")
        let note = try server.shareNote(owner: owner)
        let madeUp = String(repeating: "a", count: 26)
        func answers(_ guid: String) throws -> [String] {
            let body: JSONValue = ["shortGUIDs": [["value": .string(guid)]]]
            let resolve = try server.post("records/resolve", body, as: stranger, database: "public").json["results"]?.arrayValue?.first
            let accept = try server.post("records/accept", body, as: stranger, database: "public").json["results"]?.arrayValue?.first
            let request = try server.tandem("shares/requestAccess", body, as: stranger).json["results"]?.arrayValue?.first
            let approve = try server.tandem("shares/approveRequesters", ["shortGUID": .string(guid), "userRecordNames": []], as: stranger).json
            let page = try server.request("GET", server.baseURL + "/share/" + guid, token: .some(nil)).text.replacingOccurrences(of: guid, with: "GUID")
            return [resolve, accept, request, approve].map { "\($0?.serverErrorCode ?? "-") \($0?["reason"]?.stringValue ?? "-")" } + [page]
        }
        #expect(try answers(note.guid) == answers(madeUp))
    }

    @Test("a participant's references may only name records they can see, and refusals never name hidden records")
    func referencesStayInside() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let writer = try server.person("writer")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(writer, "READ_WRITE")])
        try server.accept(note, as: writer)
        _ = try server.ownerModify(note, [
            Body.operation("create", name: "secret", fields: [:]),
            Body.operation("create", name: "pin", fields: ["r": Body.field(["recordName": "child", "action": "VALIDATE"], "REFERENCE")]),
        ])
        for target in ["secret", "nothing-here"] {
            let response = try server.sharedModify(note, [Body.operation("create", name: unique("x"), fields: [
                "r": Body.field(["recordName": .string(target), "action": "VALIDATE"], "REFERENCE"),
            ], extra: ["parent": ["recordName": "note"]])], as: writer).json.record(0)
            #expect(response.serverErrorCode == "VALIDATING_REFERENCE_ERROR")
            #expect(response["reason"]?.stringValue?.contains("does not exist") == true, "\(target): \(response)")
        }
        let child = try server.sharedLookup(note, ["child"], as: writer).json.record(0)
        let delete = try server.sharedModify(note, [Body.operation("delete", name: "child", recordType: nil, tag: child["recordChangeTag"]?.stringValue)],
                                             as: writer).json.record(0)
        #expect(delete.serverErrorCode == "VALIDATING_REFERENCE_ERROR")
        #expect(delete["reason"]?.stringValue?.contains("pin") == false)
    }

    @Test("a share root cannot move under a record of another share, and deleting records above a root leaves its share alone")
    func sharesDoNotNest() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let carol = try server.person("carol")
        let note = try server.shareNote(owner: owner)
        let other = try server.ownerModify(note, [
            Body.operation("create", name: "holder", fields: [:]),
            Body.operation("create", name: "b", fields: [:]),
            Body.operation("create", name: "b1", fields: [:], extra: ["parent": ["recordName": "b"]]),
            Body.operation("create", name: "sb", recordType: "cloudkit.share",
                           extra: ["forRecord": ["recordName": "b"], "participants": [Invite.email(carol)]]),
        ]).json
        let guid = other.record(3)["shortGUID"]!.stringValue!
        let sb = SharedNote(owner: owner, zone: note.zone, shareName: "sb", guid: guid, shareTag: "", rootTag: "", childTag: "")
        try server.accept(sb, as: carol)
        let b = try server.post("records/lookup", Body.lookup(["b"], zone: note.zone), as: owner, database: "private").json.record(0)
        let intoOther = try server.ownerModify(note, [Body.operation("forceUpdate", name: "b", recordType: nil, extra: ["parent": ["recordName": "child"]])])
        #expect(intoOther.json.record(0).serverErrorCode == "ALREADY_SHARED")
        // Under an unshared record it may go; deleting that record leaves share sb whole.
        let under = try server.ownerModify(note, [Body.operation("update", name: "b", recordType: nil, tag: b["recordChangeTag"]?.stringValue,
                                                                 extra: ["parent": ["recordName": "holder"]])])
        #expect(under.json.record(0).serverErrorCode == nil)
        _ = try server.ownerModify(note, [Body.operation("forceDelete", name: "holder", recordType: nil)])
        #expect(try server.sharedLookup(sb, ["b", "b1"], as: carol).json.records.allSatisfy { $0.serverErrorCode == nil })
    }

    @Test("deleting a share's root deletes the share record too, and the name can be used again")
    func rootDeletionTakesTheShare() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        let deleted = try server.ownerModify(note, [Body.operation("forceDelete", name: "note", recordType: nil)])
        #expect(deleted.json.record(0)["deleted"] == true)
        let lookup = try server.post("records/lookup", Body.lookup(["share"], zone: note.zone), as: owner, database: "private").json.record(0)
        #expect(lookup.serverErrorCode == "NOT_FOUND")
        let again = try server.ownerModify(note, [
            Body.operation("create", name: "note2", fields: [:]),
            Body.operation("create", name: "share", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "note2"]]),
        ])
        #expect(again.json.records.allSatisfy { $0.serverErrorCode == nil })
    }

    @Test("a share fetched from the server saves back unchanged (owner and administrator)")
    func roundTrip() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let admin = try server.person("admin")
        let user = try server.person("user")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(admin, "READ_WRITE", type: "ADMINISTRATOR"), Invite.email(user)])
        try server.accept(note, as: admin)
        for person in [owner, admin] {
            var fetched = try server.shareRecord(note, as: person).objectValue!
            fetched["recordName"] = .string(note.shareName)
            let saved = person.recordName == owner.recordName
                ? try server.ownerModify(note, [["operationType": "update", "record": .object(fetched)]])
                : try server.sharedModify(note, [["operationType": "update", "record": .object(fetched)]], as: person)
            #expect(saved.json.record(0).serverErrorCode == nil, "\(saved.text)")
            let statuses = (saved.json.record(0)["participants"]?.arrayValue ?? []).compactMap { $0["acceptanceStatus"]?.stringValue }
            #expect(statuses == ["ACCEPTED", "ACCEPTED", "INVITED"])
        }
    }

    @Test("approving an old request of someone who joined meanwhile keeps them as they are")
    func approveAfterJoining() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let hank = try server.person("hank")
        let note = try server.shareNote(owner: owner, extraShareKeys: ["allowsAccessRequests": true])
        _ = try server.tandem("shares/requestAccess", ["shortGUIDs": [["value": .string(note.guid)]]], as: hank)
        let share = try server.shareRecord(note, as: owner)
        _ = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: share["recordChangeTag"]?.stringValue,
                                                         extra: ["participants": [Invite.email(hank, "READ_WRITE")]])])
        try server.accept(note, as: hank)
        #expect(try server.shareRecord(note, as: owner)["requesters"] == .array([]), "accepting drops the pending request")
        let approved = try server.tandem("shares/approveRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(hank.recordName)]], as: owner)
        #expect(approved.json.serverErrorCode == "BAD_REQUEST" || approved.status == 200)
        let me = try server.resolve(note, as: hank).json["results"]?.arrayValue?.first
        #expect(me?["participantStatus"] == "ACCEPTED")
        #expect(me?["participantPermission"] == "READ_WRITE")
    }

    @Test("requester actions with nothing to do keep the share's version; an empty list is refused (W23)")
    func requesterActionsWithNothingToDo() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let ivy = try server.person("ivy")
        let note = try server.shareNote(owner: owner, extraShareKeys: ["allowsAccessRequests": true])
        func tag() throws -> JSONValue? { try server.shareRecord(note, as: owner)["recordChangeTag"] }
        func act(_ action: String, _ users: [Person]) throws -> TestServer.Response {
            try server.tandem("shares/" + action, ["shortGUID": .string(note.guid), "userRecordNames": .array(users.map { .string($0.recordName) })], as: owner)
        }
        let first = try tag()
        for action in ["approveRequesters", "denyRequesters", "blockRequesters", "unblockIdentities"] {
            let empty = try act(action, [])
            #expect(empty.status == 400 && empty.json.serverErrorCode == "BAD_REQUEST", "\(action): \(empty.text)")
        }
        // Ivy never asked and was never blocked: denying and unblocking her change nothing.
        #expect(try act("denyRequesters", [ivy]).status == 200)
        #expect(try act("unblockIdentities", [ivy]).status == 200)
        #expect(try tag() == first)
        // Blocking her is a change; blocking her again is not; unblocking her is.
        #expect(try act("blockRequesters", [ivy]).status == 200)
        let blocked = try tag()
        #expect(blocked != first)
        #expect(try act("blockRequesters", [ivy]).status == 200)
        #expect(try tag() == blocked)
        #expect(try act("unblockIdentities", [ivy]).status == 200)
        #expect(try tag() != blocked)
    }

    @Test("the owner inviting someone they blocked lifts the block: invited and blocked at once is never shown (W23)")
    func invitingLiftsABlock() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let jo = try server.person("jo")
        let note = try server.shareNote(owner: owner, extraShareKeys: ["allowsAccessRequests": true])
        let blocked = try server.tandem("shares/blockRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(jo.recordName)]], as: owner)
        #expect((blocked.json["share"]?["blockedIdentities"]?.arrayValue ?? []).count == 1)
        let share = try server.shareRecord(note, as: owner)
        _ = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: share["recordChangeTag"]?.stringValue,
                                                         extra: ["participants": [Invite.email(jo, "READ_ONLY")]])])
        #expect(try server.shareRecord(note, as: owner)["blockedIdentities"]?.arrayValue ?? [] == [])
        #expect(try server.accept(note, as: jo)["participantStatus"] == "ACCEPTED")
        // Having left, Jo may ask again: the owner's invitation ended the block.
        let record = try server.shareRecord(note, as: owner)
        #expect(record["blockedIdentities"]?.arrayValue ?? [] == [])
    }

    @Test("a root whose save failed gets no share")
    func failedRootNoShare() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let note = try server.shareNote(owner: owner)
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: "child", fields: [:]),
            Body.operation("create", name: "s2", recordType: "cloudkit.share", extra: ["forRecord": ["recordName": "child"]]),
        ], zone: note.zone, atomic: false), as: owner, database: "private").json
        #expect(response.record(0).serverErrorCode == "EXISTS")
        #expect(response.record(1).serverErrorCode == "BAD_REQUEST")
    }

    @Test("a blocked public user cannot join again; public users' uploads follow the current publicPermission")
    func publicUsers() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let pat = try server.person("pat")
        let note = try server.shareNote(owner: owner, publicPermission: "READ_ONLY")
        try server.accept(note, as: pat)
        let upload: JSONValue = ["zoneID": note.sharedZoneID, "tokens": [["recordType": "Photo", "fieldName": "photo"]]]
        #expect(try server.post("assets/upload", upload, as: pat, database: "shared").json.serverErrorCode == "ACCESS_DENIED")
        let share = try server.shareRecord(note, as: owner)
        _ = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: share["recordChangeTag"]?.stringValue,
                                                         extra: ["publicPermission": "READ_WRITE"])])
        #expect(try server.post("assets/upload", upload, as: pat, database: "shared").json.serverErrorCode == nil)
        _ = try server.tandem("shares/blockRequesters", ["shortGUID": .string(note.guid), "userRecordNames": [.string(pat.recordName)]], as: owner)
        #expect(try server.sharedLookup(note, ["note"], as: pat).json.serverErrorCode == "ZONE_NOT_FOUND")
        #expect(try server.accept(note, as: pat).serverErrorCode == "NOT_FOUND")
    }

    @Test("malformed participant lists and share fields are refused", arguments: [
        "duplicate", "owner type", "forRecord zone", "title type", "share as parent", "bad email", "long email",
    ])
    func refusals(_ label: String) throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let bob = try server.person("bob")
        let note = try server.shareNote(owner: owner)
        let operation: JSONValue
        switch label {
        case "duplicate":
            operation = Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                       extra: ["participants": [Invite.email(bob), Invite.email(bob, "READ_WRITE")]])
        case "owner type":
            operation = Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                       extra: ["participants": [Invite.email(bob, type: "OWNER")]])
        case "forRecord zone":
            operation = Body.operation("create", name: "s9", recordType: "cloudkit.share",
                                       extra: ["forRecord": ["recordName": "child", "zoneID": ["zoneName": "elsewhere"]]])
        case "title type":
            operation = Body.operation("update", name: "share", recordType: nil, tag: note.shareTag, fields: ["cloudkit.title": Body.field(5)])
        case "share as parent":
            operation = Body.operation("create", name: "kid", fields: [:], extra: ["parent": ["recordName": "share"]])
        case "bad email":
            operation = Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                       extra: ["participants": [Invite.address("x\n@y.com")]])
        default:
            operation = Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                       extra: ["participants": [Invite.address(String(repeating: "a", count: 300) + "@example.com")]])
        }
        let response = try server.ownerModify(note, [operation])
        let code = response.json.serverErrorCode ?? response.json.record(0).serverErrorCode
        #expect(code == "BAD_REQUEST", "\(label): \(response.text)")
    }

    @Test("a read-only participant saving the share gets ACCESS_DENIED, whatever the tag; an administrator cannot raise their own permission")
    func shareSavePermissions() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        let reader = try server.person("reader")
        let admin = try server.person("admin")
        let note = try server.shareNote(owner: owner, participants: [Invite.email(reader), Invite.email(admin, type: "ADMINISTRATOR")])
        try server.accept(note, as: reader)
        try server.accept(note, as: admin)
        let stale = try server.sharedModify(note, [Body.operation("forceUpdate", name: "share", recordType: nil, tag: "1-1",
                                                                  fields: ["cloudkit.title": Body.field("mine")])], as: reader)
        #expect(stale.json.record(0).serverErrorCode == "ACCESS_DENIED")
        let tag = try server.shareRecord(note, as: admin)["recordChangeTag"]?.stringValue
        let raise = try server.sharedModify(note, [Body.operation("update", name: "share", recordType: nil, tag: tag, extra: [
            "participants": [Invite.email(reader), Invite.email(admin, "READ_WRITE", type: "ADMINISTRATOR")],
        ])], as: admin)
        #expect(raise.json.record(0).serverErrorCode == "ACCESS_DENIED")
    }
}
