import Foundation
import Testing
import Tandem
import TandemTestSupport

/// The nine ways issue 15 found for a local store to lose an edit or a deletion, each as the
/// minimal sequence of SDK calls against a real server (a fault proxy in front of the device
/// that needs one). Devices sync by hand (`automaticallySync: false`) so the order is the test's.
@Suite("LocalStore edit safety")
struct LocalStoreEditSafetyTests {
    @Test func anEditSavedWhileAConflictIsMergedIsKept() async throws {
        let server = TestServer.shared
        let (one, _) = try device(server.ada)
        let box = StoreBox()
        let (two, _) = try device(server.ada, merge: { conflict in
            // The app saves while the merge runs.
            box.merged = true
            if var note = try? box.store?.record(for: conflict.localRecord.recordID) {
                note["color"] = "blue"
                try? box.store?.save([note])
            }
            return LocalStore.serverRecordWithLocalChanges(conflict)
        })
        box.store = two
        let id = try await sharedRecord(on: one, and: two)

        try await edit(one, id) { $0["title"] = "one" }
        try await one.sync()
        try await edit(two, id, sync: false) { $0["body"] = "two" }   // two has not fetched: conflict
        try await two.privateEngine.sendChanges()
        #expect(box.merged, "the send met a conflict")
        try await two.sync()
        try await one.sync()
        for store in [one, two] {
            let note = try #require(try store.record(for: id))
            #expect(note["color"] as? String == "blue", "the edit saved during the merge survives")
            #expect(note["title"] as? String == "one")
            #expect(note["body"] as? String == "two")
        }
        #expect(try await server.ada.privateDatabase.record(for: id)["color"] as? String == "blue")
        #expect(!two.hasUnsentChanges)
    }

    @Test func anAcknowledgedKeyIsNotSentAgainOverAnotherDevicesLaterEdit() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (one, _) = try device(server.container(token: server.adaToken, proxy: proxy))
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        proxy.update { $0.holdPaths = ["records/modify"] }
        try await edit(one, id, sync: false) { $0["title"] = "A" }
        let send = Task { try await one.privateEngine.sendChanges() }
        try await proxy.waitForHeldAnswer()
        try await edit(one, id, sync: false) { $0["color"] = "red" }   // while title=A is in flight
        proxy.update { $0.refuseRequests = true; $0.holdPaths = [] }    // the answer arrives, then offline
        _ = await send.result

        try await two.sync()
        try await edit(two, id) { $0["title"] = "B" }                  // acknowledged
        proxy.update { $0.refuseRequests = false }
        try await one.sync()
        try await two.sync()
        for store in [one, two] {
            let note = try #require(try store.record(for: id))
            #expect(note["title"] as? String == "B", "device two's acknowledged title stays")
            #expect(note["color"] as? String == "red")
        }
        #expect(try await server.ada.privateDatabase.record(for: id)["title"] as? String == "B")
    }

    @Test func savingARecordDeletedHereSendsOnlyTheChangedKeys() async throws {
        let server = TestServer.shared
        let (one, _) = try device(server.ada)
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        try await edit(two, id) { $0["body"] = "two's body" }          // acknowledged
        var copy = try #require(try one.record(for: id))
        try one.delete([id])                                            // not sent
        copy["title"] = "one's title"
        try one.save([copy])                                            // saved again: only title changed
        try await one.privateEngine.sendChanges()
        try await one.sync()
        try await two.sync()
        for store in [one, two] {
            let note = try #require(try store.record(for: id))
            #expect(note["body"] as? String == "two's body", "the other device's body is not reverted")
            #expect(note["title"] as? String == "one's title")
        }
    }

    @Test func deletingARecordWhoseCreateIsInFlightDeletesItAndEditsMeanwhileGoOut() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (one, _) = try device(server.container(token: server.adaToken, proxy: proxy))
        let (two, _) = try device(server.ada)
        let zone = try await sharedRecord(on: one, and: two).zoneID

        let doomed = Record.ID(recordName: unique("doomed"), zoneID: zone)
        let kept = Record.ID(recordName: unique("kept"), zoneID: zone)
        var a = Record(recordType: "Note", recordID: doomed)
        a["title"] = "doomed"
        var b = Record(recordType: "Note", recordID: kept)
        b["title"] = "kept"
        try one.save([a, b])
        proxy.update { $0.holdPaths = ["records/modify"] }
        let send = Task { try await one.privateEngine.sendChanges() }
        try await proxy.waitForHeldAnswer()
        try one.delete([doomed])                                         // its create is in flight
        try await edit(one, kept, sync: false) { $0["color"] = "red" }  // so is this one's
        proxy.releaseHeld()
        _ = try await send.value
        try await one.sync()
        try await two.sync()
        for store in [one, two] {
            #expect(try store.record(for: doomed) == nil, "the deleted record does not come back")
            #expect(try store.record(for: kept)?["color"] as? String == "red", "the edit made meanwhile is sent")
        }
        await #expect(throws: TandemError.self) { try await server.ada.privateDatabase.record(for: doomed) }
    }

    @Test func aCreateWhoseAnswerWasLostIsNotRepeatedOverAnotherDevicesDeletion() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (one, changes) = try device(server.container(token: server.adaToken, proxy: proxy))
        let (two, _) = try device(server.ada)
        let zone = try await sharedRecord(on: one, and: two).zoneID

        let id = Record.ID(recordName: unique("lost-answer"), zoneID: zone)
        var note = Record(recordType: "Note", recordID: id)
        note["title"] = "created once"
        try one.save([note])
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await one.privateEngine.sendChanges() }   // applied, answer lost

        try await two.sync()
        #expect(try two.record(for: id) != nil)
        try two.delete([id])
        try await two.sync()                                             // acknowledged deletion
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await one.privateEngine.sendChanges()                        // no fetch asked for
        try await one.sync()
        try await two.sync()
        await #expect(throws: TandemError.self, "deletion wins (K22)") { try await server.ada.privateDatabase.record(for: id) }
        #expect(try one.record(for: id) == nil)
        #expect(try two.record(for: id) == nil)
        #expect(changes.all.contains { if case .deletedWhileEdited(let r) = $0 { r.recordID == id } else { false } })
    }

    /// The same hazard one level down: the transport repeating a create whose answer was lost,
    /// after another device deleted the record (found by the random run, seeds 119 and 193).
    @Test func aCreateWhoseAnswerWasLostIsNotRetriedByTheTransportOverADeletion() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (one, _) = try device(server.container(token: server.adaToken, proxy: proxy))
        let (two, _) = try device(server.ada)
        let zone = try await sharedRecord(on: one, and: two).zoneID
        try await one.sync()

        let id = Record.ID(recordName: unique("retried"), zoneID: zone)
        var note = Record(recordType: "Note", recordID: id)
        note["title"] = "created once"
        try one.save([note])
        // The create is applied and its answer lost; a repeat of it would wait at the proxy.
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.holdRequestsAfterDrop = true }
        let send = Task { try await one.privateEngine.sendChanges() }
        try await eventually("the answer was dropped") { proxy.droppedAnswers == 1 }
        try await two.sync()
        try two.delete([id])
        try await two.sync()                                       // acknowledged deletion
        proxy.update { $0.holdRequestPaths = []; $0.holdRequestsAfterDrop = false }
        _ = await send.result
        try await one.sync()
        try await two.sync()
        await #expect(throws: TandemError.self, "deletion wins (K22)") { try await server.ada.privateDatabase.record(for: id) }
        #expect(try one.record(for: id) == nil)
    }

    @Test func aRecordOverTheSizeLimitIsRefusedWithAnEventAndNotSentLater() async throws {
        let server = TestServer.shared
        let url = try temporaryStoreURL()
        let changes = ChangeLog()
        var store: LocalStore? = try LocalStore(container: server.ada, configuration: .init(fileURL: url, automaticallySync: false,
                                                                                           observer: { changes.add($0) }))
        let id = Record.ID(recordName: unique("huge"))
        var huge = Record(recordType: "Note", recordID: id)
        huge["text"] = String(repeating: "x", count: 1_100_000)
        try store!.save([huge])
        try await store!.sync()
        let refused = changes.all.compactMap { change -> (Record, TandemError)? in
            if case .refused(let record, let error) = change { (record, error) } else { nil }
        }
        #expect(refused.count == 1)
        #expect(refused.first?.0.recordID == id)
        #expect(refused.first?.1.code == .limitExceeded)
        #expect((refused.first?.0["text"] as? String)?.count == 1_100_000, "the event carries the unsent record")
        #expect(!store!.hasUnsentChanges)
        await store!.close()
        store = nil
        let reopened = try LocalStore(container: server.ada, fileURL: url, automaticallySync: false)
        #expect(!reopened.hasUnsentChanges, "nothing goes out after a relaunch")
        try await reopened.sync()
        await #expect(throws: TandemError.self) { try await server.ada.privateDatabase.record(for: id) }
        await reopened.close()
    }

    @Test func anEditRefusedAfterTheParticipantWasRemovedIsReportedWithTheRecord() async throws {
        let server = TestServer.shared
        let (ada, _) = try device(server.ada)
        let (bob, changes) = try device(server.bob)
        let (noteID, share) = try await shareNotebook(ada: ada, bob: bob)
        let bobNoteID = noteID.shared(owner: server.adaRecordName)
        try await bob.sync()

        try await edit(bob, bobNoteID, sync: false) { $0["text"] = "Bob's unsent edit" }
        try await ada.sync()   // the share as it is after Bob's accept (K31 is its own test)
        var removed = try #require(try ada.fetchShares(in: .private).first { $0.recordID == share.recordID })
        let participant = try #require(removed.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName })
        removed.removeParticipant(participant)
        try await ada.persistUpdatedShare(removed)
        try? await bob.sharedEngine.sendChanges()
        try? await bob.sync()
        let reported = changes.all.flatMap { change -> [Record] in
            switch change {
            case .refused(let record, _): [record]
            case .unsentChangesLost(_, let records, _): records
            default: []
            }
        }
        #expect(reported.contains { $0.recordID == bobNoteID && $0["text"] as? String == "Bob's unsent edit" })
        #expect(!bob.hasUnsentChanges)
        #expect(try bob.record(for: bobNoteID) == nil)
    }

    @Test func aParticipantRemovedReaddedAndAcceptedWithoutAFetchKeepsTheZone() async throws {
        let server = TestServer.shared
        let (ada, _) = try device(server.ada)
        let (bob, _) = try device(server.bob)
        let (noteID, share) = try await shareNotebook(ada: ada, bob: bob)
        let bobNoteID = noteID.shared(owner: server.adaRecordName)
        #expect(try bob.record(for: bobNoteID) != nil)
        try await ada.sync()   // the share as it is after Bob's accept (K31 is its own test)

        var current = try #require(try ada.fetchShares(in: .private).first { $0.recordID == share.recordID })
        let participant = try #require(current.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName })
        current.removeParticipant(participant)
        current = try await ada.persistUpdatedShare(current)
        current.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
        let readded = try await ada.persistUpdatedShare(current)
        let metadata = try await bob.container.shareMetadata(for: try #require(readded.url))
        try await bob.acceptShareInvitations(from: [metadata])   // Bob did not fetch in between
        try await bob.sync()
        #expect(try bob.zones(in: .shared).contains(bobNoteID.zoneID), "the feed's order is kept: removed, then modified")
        #expect(try bob.record(for: bobNoteID)?["text"] as? String == "first note")
    }

    /// Also in issue 15: every accept changes the share's change tag, so the owner's next change
    /// to a share it had not fetched again failed with `serverRecordChanged` (K31).
    @Test func theOwnersShareChangeIsAppliedToAShareThatMovedUnderIt() async throws {
        let server = TestServer.shared
        let (ada, _) = try device(server.ada)
        let (bob, _) = try device(server.bob)
        let (_, share) = try await shareNotebook(ada: ada, bob: bob)   // Bob's accept moved the share
        let carol = "\(unique("carol"))@example.com"
        _ = try server.addUser(email: carol, name: "Carol")
        var stale = try #require(try ada.fetchShares(in: .private).first { $0.recordID == share.recordID })
        stale.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: carol), permission: .readOnly))
        let saved = try await ada.persistUpdatedShare(stale)
        #expect(saved.participants.contains { $0.userIdentity.lookupInfo?.emailAddress == carol && $0.permission == .readOnly })
        #expect(saved.participants.contains { $0.userIdentity.userRecordID?.recordName == server.bobRecordName && $0.acceptanceStatus == .accepted },
                "Bob's acceptance is kept")
    }

    @Test func anEditSavedWhileShareIsInFlightFollowsTheRecordIntoTheShare() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (ada, _) = try device(server.container(token: server.adaToken, proxy: proxy))
        let id = Record.ID(recordName: unique("to-share"))
        var note = Record(recordType: "Note", recordID: id)
        note["text"] = "before sharing"
        try ada.save([note])
        try await ada.sync()

        proxy.update { $0.holdPaths = ["records/modify"] }
        let sharing = Task { try await ada.share([id], to: nil) }
        try await proxy.waitForHeldAnswer()
        try await edit(ada, id, sync: false) { $0["color"] = "blue" }
        proxy.releaseHeld()
        let (moved, _) = try await sharing.value
        let movedID = try #require(moved.first?.recordID)
        try await ada.sync()
        #expect(try ada.record(for: movedID)?["color"] as? String == "blue")
        #expect(try await server.ada.privateDatabase.record(for: movedID)["color"] as? String == "blue")
        #expect(try ada.record(for: id) == nil)
    }

    /// Deletion wins on the zone path too (K22): an edit sent into a zone another device deleted
    /// does not create the zone again.
    @Test func anEditSentIntoAZoneDeletedElsewhereDoesNotBringTheZoneBack() async throws {
        let server = TestServer.shared
        let (one, changes) = try device(server.ada)
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)
        try await one.sync()   // one holds the zone's token

        try await two.purgeZone(id.zoneID)
        try await edit(one, id, sync: false) { $0["title"] = "edited in a deleted zone" }
        try? await one.privateEngine.sendChanges()   // before any fetch
        try await one.sync()
        await #expect(throws: TandemError.self, "the zone stays deleted") { try await server.ada.privateDatabase.recordZone(for: id.zoneID) }
        #expect(try one.record(for: id) == nil)
        #expect(!one.hasUnsentChanges)
        #expect(changes.all.contains { change in
            switch change {
            case .refused(let record, _): record.recordID == id && record["title"] as? String == "edited in a deleted zone"
            case .unsentChangesLost(_, let records, _): records.contains { $0.recordID == id }
            default: false
            }
        }, "the unsent edit is reported with the record")
    }

    @Test func aRecordDeletedHereStaysDeletedWhenAnotherDevicesEditIsFetched() async throws {
        let server = TestServer.shared
        let (one, _) = try device(server.ada)
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        try one.delete([id])                                   // not sent yet
        try await edit(two, id) { $0["title"] = "two's edit" }
        try await one.privateEngine.fetchChanges()
        #expect(try one.record(for: id) == nil, "the fetched edit does not bring it back")
        try await one.sync()
        try await two.sync()
        #expect(try two.record(for: id) == nil, "deletion wins (K22)")
        await #expect(throws: TandemError.self) { try await server.ada.privateDatabase.record(for: id) }
    }
}

// MARK: Helpers

final class StoreBox: @unchecked Sendable {
    var store: LocalStore?
    var merged = false
}

/// A store file of its own in a temporary directory that goes when the test process ends.
func temporaryStoreURL() throws -> URL {
    URL(fileURLWithPath: try ExitCleanup.temporaryDirectory("tandem-local") + "/store.sqlite")
}

/// A device: a store in a new file, syncing by hand, with its changes logged.
func device(_ container: Container, merge: @escaping @Sendable (LocalStore.Conflict) -> Record? = LocalStore.serverRecordWithLocalChanges)
    throws -> (LocalStore, ChangeLog) {
    let changes = ChangeLog()
    let store = try LocalStore(container: container, configuration: .init(fileURL: try temporaryStoreURL(), automaticallySync: false,
                                                                         merge: merge, observer: { changes.add($0) }))
    return (store, changes)
}

/// A note in a new private zone of the first device, synced to both devices of the user.
func sharedRecord(on one: LocalStore, and two: LocalStore) async throws -> Record.ID {
    let id = Record.ID(recordName: unique("note"), zoneID: RecordZone.ID(zoneName: unique("zone")))
    var note = Record(recordType: "Note", recordID: id)
    note["title"] = "title 0"
    note["body"] = "body 0"
    try one.save([note])
    try await one.sync()
    try await two.sync()
    guard try two.record(for: id) != nil else { throw TestFailure("the second device did not get \(id)") }
    return id
}

/// Edits the store's copy of a record, then syncs unless told not to.
func edit(_ store: LocalStore, _ id: Record.ID, sync: Bool = true, _ change: (inout Record) -> Void) async throws {
    guard var record = try store.record(for: id) else { throw TestFailure("no record \(id)") }
    change(&record)
    try store.save([record])
    if sync { try await store.sync() }
}
