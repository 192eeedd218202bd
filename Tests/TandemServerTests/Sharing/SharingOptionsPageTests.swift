import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// A share's allowed sharing options over plain HTTP (issue 23 item 3; decisions R16–R18): the
/// wire key round-trips, a save outside them is a per-record `BAD_REQUEST` that writes nothing
/// (the root in the same atomic request included), and the share page offers only what they
/// allow. On both stores (the server suites run again on PostgreSQL).
@Suite struct SharingOptionsPageTests {
    static let readOnlyInvited: JSONObject = ["allowedSharingOptions": ["allowedParticipantPermissionOptions": "READ_ONLY",
                                                                        "allowedParticipantAccessOptions": "SPECIFIED_RECIPIENTS_ONLY"]]

    @Test func aSaveOutsideTheSharesOptionsIsRefusedAndWritesNothing() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), friend = try server.person("friend")
        let note = try server.shareNote(owner: owner, extraShareKeys: Self.readOnlyInvited)
        let stored = try server.shareRecord(note, as: owner)
        #expect(stored["allowedSharingOptions"]?["allowedParticipantPermissionOptions"] == "READ_ONLY", "\(stored)")
        #expect(stored["allowedSharingOptions"]?["allowedParticipantAccessOptions"] == "SPECIFIED_RECIPIENTS_ONLY")

        // A read-write invitation, saved with a change to the root in one atomic request.
        let response = try server.post("records/modify", Body.modify([
            Body.operation("update", name: "note", fields: ["title": Body.field("Changed")], extra: ["recordChangeTag": .string(note.rootTag)]),
            Body.operation("update", name: "share", recordType: "cloudkit.share", fields: [:],
                           extra: ["recordChangeTag": .string(note.shareTag),
                                   "participants": [["lookupInfo": ["emailAddress": .string(friend.email)], "permission": "READ_WRITE"]]]),
        ], zone: note.zone, atomic: true), as: owner, database: "private")
        let share = response.json.records.last
        #expect(share?.serverErrorCode == "BAD_REQUEST", "\(response.text)")
        #expect(share?["reason"]?.stringValue?.hasPrefix("outside the allowed sharing options") == true, "\(response.text)")
        #expect(try server.shareRecord(note, as: owner)["recordChangeTag"]?.stringValue == note.shareTag, "the share is unchanged")
        #expect(try SharePageTests.participants(server, note).isEmpty)
        let root = try server.post("records/lookup", Body.lookup(["note"], zone: note.zone), as: owner, database: "private").json.records.first
        #expect(root?["recordChangeTag"]?.stringValue == note.rootTag, "the root is unchanged")

        // Public: refused too. Read-only invitation: saved.
        let opened = try server.post("records/modify", Body.modify([
            Body.operation("update", name: "share", recordType: "cloudkit.share", fields: [:],
                           extra: ["recordChangeTag": .string(note.shareTag), "publicPermission": "READ_ONLY"]),
        ], zone: note.zone), as: owner, database: "private")
        #expect(opened.json.records.first?.serverErrorCode == "BAD_REQUEST", "\(opened.text)")
        let invited = try server.post("records/modify", Body.modify([
            Body.operation("update", name: "share", recordType: "cloudkit.share", fields: [:],
                           extra: ["recordChangeTag": .string(note.shareTag),
                                   "participants": [["lookupInfo": ["emailAddress": .string(friend.email)], "permission": "READ_ONLY"]]]),
        ], zone: note.zone), as: owner, database: "private")
        #expect(invited.json.records.first?.serverErrorCode == nil, "\(invited.text)")
        #expect(try SharePageTests.participants(server, note)[friend.email] == "USER READ_ONLY INVITED")
    }

    @Test func unknownOptionsAreRefusedAsMalformed() throws {
        let server = try Shared.server
        let owner = try server.person("owner")
        #expect(throws: (any Error).self) {
            try server.shareNote(owner: owner, extraShareKeys: ["allowedSharingOptions": ["allowedParticipantPermissionOptions": "WRITE"]])
        }
    }

    /// Seed behaviour: the page offered every permission and a public link to everyone who
    /// manages the share. A read-only, invited-only share offers neither read-write nor a
    /// public link; an anyone-with-the-link share offers no invitation form.
    @Test func theSharePageOffersOnlyWhatTheOptionsAllow() throws {
        let server = try Shared.server
        let owner = try server.person("owner"), friend = try server.person("friend")
        let note = try server.shareNote(owner: owner, extraShareKeys: Self.readOnlyInvited)
        var page = SharePageVisit(server: server, guid: note.guid, token: owner.token)
        let shown = try page.open()
        #expect(shown.status == 200 && shown.body.contains(#"id="invite""#) && shown.body.contains(#"id="public-link""#), "\(shown.text)")
        #expect(!shown.body.contains(#"value="READ_WRITE""#), "\(shown.body)")
        #expect(!shown.body.contains("Anyone with the link can view") && shown.body.contains(#"value="NONE""#))
        // A form sent by hand with what the page did not offer writes nothing.
        let forced = try page.post("invite", ["email": friend.email, "permission": "READ_WRITE"])
        #expect(SharePageVisit.outcome(forced) != "ok", "\(forced.text)")
        #expect(try SharePageTests.participants(server, note).isEmpty)

        let linkOnly = try server.shareNote(owner: owner, publicPermission: "READ_ONLY",
                                            extraShareKeys: ["allowedSharingOptions": ["allowedParticipantAccessOptions": "ANYONE_WITH_LINK"]])
        var linkPage = SharePageVisit(server: server, guid: linkOnly.guid, token: owner.token)
        let linkShown = try linkPage.open()
        #expect(linkShown.status == 200 && !linkShown.body.contains(#"id="invite""#), "\(linkShown.body)")
        #expect(!linkShown.body.contains("Off: only invited people") && linkShown.body.contains("Anyone with the link can make changes"))
    }
}
