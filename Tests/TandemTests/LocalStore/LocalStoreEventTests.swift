import Foundation
import Testing
import Tandem

/// Each event of K32 (b) on its own path, pinned: which event, with what. Real server on
/// loopback; devices sync by hand.
@Suite("LocalStore events")
struct LocalStoreEventTests {
    /// K27: Bob loses access while he has an unsent edit and an unsent deletion in Ada's zone; his
    /// next fetch drops the zone and reports both, with the edited record as it was here.
    @Test func losingAccessReportsTheUnsentEditsAndDeletionsOfTheZone() async throws {
        let server = TestServer.shared
        let (ada, _) = try device(server.ada)
        let (bob, changes) = try device(server.bob)
        let (noteID, share) = try await shareNotebook(ada: ada, bob: bob)
        var second = Record(recordType: "Note", recordID: Record.ID(recordName: unique("second"), zoneID: noteID.zoneID))
        second["text"] = "second note"
        try ada.save([second])
        try await ada.sync()
        try await bob.sync()
        let (edited, deleted) = (noteID.shared(owner: server.adaRecordName), second.recordID.shared(owner: server.adaRecordName))
        #expect(try bob.record(for: deleted) != nil)

        try await edit(bob, edited, sync: false) { $0["text"] = "Bob's unsent edit" }
        try bob.delete([deleted])
        try await removeBob(ada: ada, share: share, server: server)
        try await bob.sharedEngine.fetchChanges()                  // the feed says: access lost

        let lost = changes.all.compactMap { change -> (RecordZone.ID, [Record], [Record.ID])? in
            if case .unsentChangesLost(let zoneID, let records, let deletions) = change { (zoneID, records, deletions) } else { nil }
        }   // (Bob's store also mirrors other tests' zones on the shared server: those hold no unsent changes)
        #expect(lost.count == 1)
        #expect(lost.first?.0 == edited.zoneID)
        #expect(lost.first?.1.map(\.recordID) == [edited])
        #expect(lost.first?.1.first?["text"] as? String == "Bob's unsent edit", "the record as it was on this device")
        #expect(lost.first?.2 == [deleted])
        #expect(changes.all.contains { if case .zonesRemoved(let zones) = $0 { zones.contains(edited.zoneID) } else { false } })
        #expect(!changes.all.contains { if case .refused = $0 { true } else { false } })
        #expect(!bob.hasUnsentChanges)
        #expect(try bob.record(for: edited) == nil)
        #expect(try !bob.zones(in: .shared).contains(edited.zoneID))
    }

    /// K26: the same edit sent before any fetch is refused with `zoneNotFound` (access lost) and
    /// reported as refused, with the record; the zone's later removal does not report it again.
    @Test func anEditSentAfterAccessWasLostIsRefusedWithZoneNotFound() async throws {
        let server = TestServer.shared
        let (ada, _) = try device(server.ada)
        let (bob, changes) = try device(server.bob)
        let (noteID, share) = try await shareNotebook(ada: ada, bob: bob)
        let edited = noteID.shared(owner: server.adaRecordName)
        try await bob.sync()

        try await edit(bob, edited, sync: false) { $0["text"] = "Bob's unsent edit" }
        try await removeBob(ada: ada, share: share, server: server)
        try? await bob.sharedEngine.sendChanges()                  // no fetch first

        let refused = changes.all.compactMap { change -> (Record, TandemError)? in
            if case .refused(let record, let error) = change { (record, error) } else { nil }
        }
        #expect(refused.count == 1)
        #expect(refused.first?.0.recordID == edited)
        #expect(refused.first?.0["text"] as? String == "Bob's unsent edit")
        #expect(refused.first?.1.code == .zoneNotFound)
        #expect(!bob.hasUnsentChanges)
        try await bob.sync()
        #expect(!changes.all.contains { if case .unsentChangesLost = $0 { true } else { false } }, "reported once, as refused")
        #expect(try bob.record(for: edited) == nil)
    }

    /// K25: a relaunch with unsent changes fetches before its first send, as a send whose answer
    /// was lost does: a create whose answer was lost before the relaunch, deleted by another
    /// device meanwhile, is not sent again (deletion wins, K22).
    @Test func aRelaunchWithUnsentChangesFetchesBeforeItsFirstSend() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let url = try temporaryStoreURL()
        var one: LocalStore? = try LocalStore(container: server.container(token: server.adaToken, proxy: proxy),
                                              fileURL: url, automaticallySync: false)
        let (two, _) = try device(server.ada)
        let zone = try await sharedRecord(on: one!, and: two).zoneID

        let id = Record.ID(recordName: unique("relaunched"), zoneID: zone)
        var note = Record(recordType: "Note", recordID: id)
        note["title"] = "created before the relaunch"
        try one!.save([note])
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await one!.privateEngine.sendChanges() }   // applied, answer lost
        await one!.close()
        one = nil

        try await two.sync()
        try two.delete([id])
        try await two.sync()                                       // acknowledged deletion
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        let changes = ChangeLog()
        let reopened = try LocalStore(container: server.container(token: server.adaToken, proxy: proxy),
                                      configuration: .init(fileURL: url, automaticallySync: false, observer: { changes.add($0) }))
        #expect(reopened.hasUnsentChanges, "the create is still unsent after the relaunch")
        try await reopened.privateEngine.sendChanges()              // a send only: it fetches first
        await #expect(throws: TandemError.self, "deletion wins (K22)") { try await server.ada.privateDatabase.record(for: id) }
        #expect(try reopened.record(for: id) == nil)
        #expect(changes.all.contains { if case .deletedWhileEdited(let record) = $0 { record.recordID == id } else { false } })
        #expect(!reopened.hasUnsentChanges)
        await reopened.close()
    }

    private func removeBob(ada: LocalStore, share: Share, server: TestServer) async throws {
        try await ada.sync()   // the share as it is after Bob's accept
        var current = try #require(try ada.fetchShares(in: .private).first { $0.recordID == share.recordID })
        let bob = try #require(current.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName })
        current.removeParticipant(bob)
        try await ada.persistUpdatedShare(current)
    }
}
