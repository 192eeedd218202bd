import Foundation
import Testing
import Tandem

/// A fetched server record that changed a key this device has not sent yet is a conflict, as a
/// send's `serverRecordChanged` is: the merge closure decides, and `.conflict` names the record
/// (QA2 findings F2 and F4; K33). Real server on loopback, devices syncing by hand.
@Suite("LocalStore fetched conflicts")
struct LocalStoreFetchedConflictTests {
    /// F2: the save reached the server and its answer was lost; another device then edited the
    /// same key (acknowledged). The next sync fetches first (K25) and must not send the old value
    /// over the newer one without the merge: here the app's merge keeps the server's version.
    @Test func aResentEditWhoseAnswerWasLostDoesNotRevertAnotherDevicesLaterEdit() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let conflicts = ConflictLog()
        let (one, changes) = try device(server.container(token: server.adaToken, proxy: proxy), merge: { conflict in
            conflicts.add(conflict)
            return conflict.serverRecord                                   // this app keeps the server's version
        })
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        try await edit(one, id, sync: false) { $0["title"] = "one, answer lost" }
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await one.privateEngine.sendChanges() }   // applied, answer lost
        #expect(try await server.ada.privateDatabase.record(for: id)["title"] as? String == "one, answer lost")

        try await two.sync()
        try await edit(two, id) { $0["title"] = "two, later" }            // acknowledged
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await one.sync()
        try await two.sync()

        #expect(try await server.ada.privateDatabase.record(for: id)["title"] as? String == "two, later",
                "the old edit is not sent again over device two's acknowledged edit")
        for store in [one, two] { #expect(try store.record(for: id)?["title"] as? String == "two, later") }
        #expect(conflicts.all.contains { $0.serverRecord["title"] as? String == "two, later" }, "the merge saw the server's record")
        #expect(changes.all.contains { if case .conflict(let r) = $0 { r == id } else { false } }, "a conflict event names the record")
        #expect(!one.hasUnsentChanges)
    }

    /// F2 as QA2 ran it: Bob (READ_WRITE participant) loses the answer to his save in Ada's
    /// shared zone; Ada edits the same note (acknowledged); Bob's next sync meets her edit in
    /// its fetch and goes through the merge (here: keep the server's) with an event.
    @Test func aParticipantsLostAnswerEditIsNotResentOverTheOwnersLaterEdit() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let conflicts = ConflictLog()
        let (ada, _) = try device(server.ada)
        let (bob, changes) = try device(server.container(token: server.bobToken, proxy: proxy), merge: { conflict in
            conflicts.add(conflict)
            return conflict.serverRecord
        })
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)
        try await bob.sync()
        let bobsNote = noteID.shared(owner: server.adaRecordName)

        try await edit(bob, bobsNote, sync: false) { $0["text"] = "BOB-lost-answer" }
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await bob.sharedEngine.sendChanges() }   // applied, answer lost
        try await ada.sync()
        #expect(try ada.record(for: noteID)?["text"] as? String == "BOB-lost-answer", "Bob's save was applied")
        try await edit(ada, noteID) { $0["text"] = "ADA-after-bob" }       // acknowledged
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await bob.sync()
        try await ada.sync()

        #expect(try await server.ada.privateDatabase.record(for: noteID)["text"] as? String == "ADA-after-bob")
        #expect(try ada.record(for: noteID)?["text"] as? String == "ADA-after-bob")
        #expect(try bob.record(for: bobsNote)?["text"] as? String == "ADA-after-bob")
        #expect(conflicts.all.contains { $0.serverRecord["text"] as? String == "ADA-after-bob" })
        #expect(changes.all.contains { if case .conflict(let r) = $0 { r == bobsNote } else { false } })
    }

    /// F4: both devices edit the same key offline; two syncs first (acknowledged). One's sync
    /// fetches two's version before sending: that is a conflict, reported and merged, not a
    /// silent rebase (the default merge keeps one's key, K16, and the app is told).
    @Test func aFetchedEditOfAKeyEditedHereIsAConflictWithAnEvent() async throws {
        let server = TestServer.shared
        let conflicts = ConflictLog()
        let (one, changes) = try device(server.ada, merge: { conflict in
            conflicts.add(conflict)
            return LocalStore.serverRecordWithLocalChanges(conflict)
        })
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        try await edit(one, id, sync: false) { $0["title"] = "one, offline" }
        try await edit(two, id, sync: false) { $0["title"] = "two, offline" }
        try await two.sync()                                              // acknowledged
        try await one.sync()
        try await two.sync()

        let conflict = try #require(conflicts.all.first, "the merge closure ran")
        #expect(conflict.serverRecord["title"] as? String == "two, offline", "with the server's record")
        #expect(conflict.localRecord["title"] as? String == "one, offline")
        #expect(conflict.changedKeys == ["title"])
        #expect(changes.all.contains { if case .conflict(let r) = $0 { r == id } else { false } }, "a conflict event names the record")
        let final = try await server.ada.privateDatabase.record(for: id)
        #expect(final["title"] as? String == "one, offline", "the default merge keeps one's key (K16)")
        for store in [one, two] { #expect(try store.record(for: id)?["title"] as? String == "one, offline") }
        #expect(!one.hasUnsentChanges)
    }

    /// No conflict when the fetched record already holds this device's unsent value (its own
    /// save whose answer was lost): the key is acknowledged by the fetch and not sent again.
    @Test func aFetchedRecordHoldingTheUnsentValueClearsItWithoutAConflict() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let conflicts = ConflictLog()
        let (one, changes) = try device(server.container(token: server.adaToken, proxy: proxy), merge: { conflict in
            conflicts.add(conflict)
            return LocalStore.serverRecordWithLocalChanges(conflict)
        })
        let (two, _) = try device(server.ada)
        let id = try await sharedRecord(on: one, and: two)

        try await edit(one, id, sync: false) { $0["title"] = "one, answer lost" }
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await one.privateEngine.sendChanges() }
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await one.sync()                                              // fetches first: the title is there
        #expect(!one.hasUnsentChanges)
        #expect(conflicts.all.isEmpty)
        #expect(!changes.all.contains { if case .conflict = $0 { true } else { false } })
        try await two.sync()
        #expect(try two.record(for: id)?["title"] as? String == "one, answer lost")
    }
}
