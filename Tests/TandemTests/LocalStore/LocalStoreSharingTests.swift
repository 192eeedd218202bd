import Foundation
import Testing
import Tandem

@Suite("LocalStore sharing")
struct LocalStoreSharingTests {
    @Test func ownerSharesANoteInOneSaveInviteeAcceptsAndBothEdit() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada)
        let bob = try makeStore(server.bob)

        // A note created on the device and shared before it ever reached the server.
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("note")))
        note["text"] = "Buy milk"
        try ada.save([note])
        let (moved, share) = try await ada.share([note.recordID], to: nil)
        let noteID = try #require(moved.first?.recordID)
        #expect(noteID.zoneID.zoneName.hasPrefix(LocalStore.shareZonePrefix))
        #expect(noteID.recordName == note.recordID.recordName)
        #expect(try ada.record(for: note.recordID) == nil, "moved out of the default zone")
        #expect(try ada.record(for: noteID)?["text"] as? String == "Buy milk")
        let onServer = try await server.ada.privateDatabase.record(for: noteID)
        #expect(onServer["text"] as? String == "Buy milk")
        let original = try await server.ada.privateDatabase.records(for: [note.recordID])[note.recordID]
        #expect((try? original?.get()) == nil, "the note never existed in the default zone")
        #expect(try ada.isShared(noteID))
        #expect(try ada.fetchShares(in: .private).contains { $0.recordID == share.recordID })

        // Invite Bob by email.
        var invited = share
        invited.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
        let saved = try await ada.persistUpdatedShare(invited)
        let url = try #require(saved.url)
        #expect(try ada.participants(for: noteID).contains { $0.userIdentity.lookupInfo?.emailAddress == "bob@example.com" && $0.acceptanceStatus == .pending })

        // Bob accepts from the URL: the notebook is in his store at once.
        let metadata = try await server.bob.shareMetadata(for: url)
        try await bob.acceptShareInvitations(from: [metadata])
        let bobNoteID = noteID.shared(owner: server.adaRecordName)
        var bobNote = try #require(try bob.record(for: bobNoteID))
        #expect(bobNote["text"] as? String == "Buy milk")
        #expect(try bob.isShared(bobNoteID))
        #expect(try bob.canUpdateRecord(bobNoteID))
        #expect(try bob.canDeleteRecord(bobNoteID))
        #expect(try !bob.canUpdateRecord(saved.recordID.shared(owner: server.adaRecordName)), "a participant cannot manage the share")
        #expect(try bob.canDeleteRecord(saved.recordID.shared(owner: server.adaRecordName)), "deleting the share leaves it (D5)")

        // Bob edits; Ada sees it (push → fetch), then Ada edits and Bob sees that.
        bobNote["text"] = "Buy oat milk"
        try bob.save([bobNote])
        try await eventually("Ada sees Bob's edit") { try ada.record(for: noteID)?["text"] as? String == "Buy oat milk" }
        var adaNote = try #require(try ada.record(for: noteID))
        adaNote["text"] = "Buy oat milk and bread"
        try ada.save([adaNote])
        try await eventually("Bob sees Ada's edit") { try bob.record(for: bobNoteID)?["text"] as? String == "Buy oat milk and bread" }
        #expect(try ada.participants(for: noteID).contains { $0.userIdentity.userRecordID?.recordName == server.bobRecordName && $0.acceptanceStatus == .accepted })
    }

    @Test func permissionAnswersFollowTheOwnersShareChanges() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada)
        let bob = try makeStore(server.bob)
        let (noteID, share) = try await shareNotebook(ada: ada, bob: bob, permission: .readOnly)
        let bobNoteID = noteID.shared(owner: server.adaRecordName)
        #expect(try bob.record(for: bobNoteID) != nil)
        #expect(try !bob.canUpdateRecord(bobNoteID), "read-only participant")
        #expect(try !bob.canDeleteRecord(bobNoteID))
        #expect(try ada.canUpdateRecord(noteID), "the owner")

        // A read-only participant's local edit is refused by the server and undone locally.
        var attempt = try #require(try bob.record(for: bobNoteID))
        attempt["text"] = "not allowed"
        try bob.save([attempt])
        try await eventually("the refused edit is undone") { try bob.record(for: bobNoteID)?["text"] as? String == "first note" }

        // The owner makes Bob a writer: Bob's answers follow once the share change is mirrored.
        var current = try #require(try ada.fetchShares(matching: [noteID])[noteID])
        #expect(current.recordID == share.recordID)
        var bobParticipant = try #require(current.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName })
        current.removeParticipant(bobParticipant)
        bobParticipant.permission = .readWrite
        current.addParticipant(bobParticipant)
        _ = try await ada.persistUpdatedShare(current)
        try await eventually("Bob may write") { try bob.canUpdateRecord(bobNoteID) }

        // And removes him: the zone leaves his store.
        var last = try #require(try ada.fetchShares(matching: [noteID])[noteID])
        let bobAgain = try #require(last.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName })
        last.removeParticipant(bobAgain)
        _ = try await ada.persistUpdatedShare(last)
        // The server pushes only to the zone's current viewers, so a removed participant learns
        // it at his next fetch (here asked for; an app fetches when it comes to the foreground).
        try await bob.sync()
        #expect(try bob.record(for: bobNoteID) == nil, "Bob lost the notebook")
        #expect(try bob.zones(in: .shared).allSatisfy { $0.zoneName != noteID.zoneID.zoneName })
        #expect(try !bob.canUpdateRecord(bobNoteID))
    }

    @Test func queriesSpanPrivateAndSharedData() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let bob = try makeStore(server.bob, automaticallySync: false)
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)
        let tag = unique("q")
        var shared: [Record] = []
        for i in 1...3 {
            var n = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-shared-\(i)", zoneID: noteID.zoneID))
            n["text"] = "\(tag) shared \(i)"
            n["rank"] = i * 10
            shared.append(n)
        }
        try ada.save(shared)
        try await ada.sync()
        var mine: [Record] = []
        for i in 1...2 {
            var n = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-bob-\(i)"))
            n["text"] = "\(tag) bob \(i)"
            n["rank"] = i * 10 + 5
            mine.append(n)
        }
        try bob.save(mine)   // offline-first: visible before any send
        try await bob.sync()

        let all = try bob.records(matching: Query(recordType: "Note", filters: [.beginsWith("text", tag)], sort: [.descending("rank")]))
        #expect(all.map { $0["rank"] as? Int64 } == [30, 25, 20, 15, 10])
        #expect(Set(all.map { $0.recordID.zoneID.ownerName }) == [server.adaRecordName, RecordZone.ID.currentUserOwnerName])
        let sharedOnly = try bob.records(matching: Query(recordType: "Note", filters: [.beginsWith("text", tag)]), in: [.shared])
        #expect(sharedOnly.count == 3)
        let ranged = try bob.records(matching: Query(recordType: "Note", filters: [.beginsWith("text", tag), .greaterThan("rank", 12), .lessThanOrEquals("rank", 25)],
                                                     sort: [.ascending("rank")]))
        #expect(ranged.map { $0["rank"] as? Int64 } == [15, 20, 25])
        let picked = try bob.records(matching: Query(recordType: "Note", filters: [.in("text", ["\(tag) bob 1", "\(tag) shared 3"])]))
        #expect(Set(picked.map(\.recordID.recordName)) == ["\(tag)-bob-1", "\(tag)-shared-3"])
        #expect(try bob.records(matching: Query(recordType: "Note", filters: [.beginsWith("text", tag)]), limit: 2).count == 2)
        #expect(throws: TandemError.self) { try bob.records(matching: Query(recordType: "Note", filters: [.containsAllTokens("text", "x")])) }
    }
}
