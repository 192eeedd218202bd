import Foundation
import Testing
import Tandem

/// Offline edits, stream drops and conflicts through two local stores (own server each: the
/// server is stopped and started again on the same data directory and port).
@Suite("LocalStore sync")
struct LocalStoreSyncTests {
    @Test func twoHundredOfflineEditsConvergeAfterTheServerComesBack() async throws {
        let server = try TestServer()
        let ada = try makeStore(server.ada)
        let bob = try makeStore(server.bob)
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)
        let zoneID = noteID.zoneID

        server.kill()
        // 200 edits while the server is down: 50 new notes, each edited 3 more times, plus one
        // delete; and Bob edits the first note offline too.
        var ids: [Record.ID] = []
        for i in 0..<50 {
            var n = Record(recordType: "Note", recordID: Record.ID(recordName: "offline-\(i)", zoneID: zoneID))
            n["text"] = "draft \(i)"
            try ada.save([n])
            ids.append(n.recordID)
        }
        for round in 1...3 {
            for id in ids {
                var n = try #require(try ada.record(for: id))
                n["text"] = "version \(round) of \(id.recordName)"
                try ada.save([n])
            }
        }
        try ada.delete([ids[49]])
        var bobsFirst = try #require(try bob.record(for: noteID.shared(owner: server.adaRecordName)))
        bobsFirst["text"] = "Bob was here offline"
        try bob.save([bobsFirst])
        #expect(ada.hasUnsentChanges && bob.hasUnsentChanges)
        #expect(try noteTexts(ada, in: [.private]).count == 50, "local reads work offline")

        // Long enough for every automatic send (and its retries) to fail.
        try await Task.sleep(nanoseconds: 2_000_000_000)
        #expect(ada.hasUnsentChanges)
        try server.start()
        let expected: [String: String] = {
            var e = ["\(noteID.recordName)": "Bob was here offline"]
            for id in ids.dropLast() { e[id.recordName] = "version 3 of \(id.recordName)" }
            return e
        }()
        try await eventually("both stores hold the same notes", within: 60) {
            try noteTexts(ada, in: [.private]) == expected && noteTexts(bob, in: [.shared]) == expected
        }
        try await eventually("nothing left to send") { !ada.hasUnsentChanges && !bob.hasUnsentChanges }
        // The server agrees.
        let feed = try await server.ada.privateDatabase.recordZoneChanges(inZoneWith: zoneID, since: nil)
        #expect(feed.modifications.filter { $0.recordType == "Note" }.count == 50)
    }

    @Test func aDroppedStreamReconnectsAndCatchesUpByToken() async throws {
        let server = try TestServer()
        let ada = try makeStore(server.ada)
        let bob = try makeStore(server.bob)
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)

        // The stream drops (server stopped); changes are made as soon as it is back, while
        // Bob's store is still waiting to reconnect: no push reaches him for them.
        server.kill()
        try server.start()
        let writes = (0..<20).map { i -> Record in
            var n = Record(recordType: "Note", recordID: Record.ID(recordName: "while-away-\(i)", zoneID: noteID.zoneID))
            n["text"] = "written while Bob was away \(i)"
            return n
        }
        let result = try await server.ada.privateDatabase.modifyRecords(saving: writes, deleting: [])
        #expect(result.partialFailure == nil)
        try await eventually("Bob caught up") {
            let texts = try noteTexts(bob, in: [.shared])
            return writes.allSatisfy { texts[$0.recordID.recordName] == $0["text"] as? String }
        }
        // Later changes arrive by push again.
        var later = Record(recordType: "Note", recordID: Record.ID(recordName: "after", zoneID: noteID.zoneID))
        later["text"] = "after the reconnection"
        try ada.save([later])
        try await eventually("Bob sees the push") { try noteTexts(bob, in: [.shared])["after"] == "after the reconnection" }
    }

    @Test func bothEditTheSameNoteAndTheLaterSaveMergesWithTheServerRecord() async throws {
        let server = TestServer.shared
        let conflicts = ConflictLog()
        let ada = try makeStore(server.ada, automaticallySync: false)
        let bob = try makeStore(server.bob, automaticallySync: false, merge: { conflict in
            conflicts.add(conflict)
            return LocalStore.serverRecordWithLocalChanges(conflict)
        })
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)
        let bobNoteID = noteID.shared(owner: server.adaRecordName)

        var adaNote = try #require(try ada.record(for: noteID))
        adaNote["text"] = "Ada's text"
        adaNote["color"] = "red"
        try ada.save([adaNote])
        try await ada.sync()

        var bobNote = try #require(try bob.record(for: bobNoteID))   // still the old version
        bobNote["text"] = "Bob's text"
        bobNote["pinned"] = 1
        try bob.save([bobNote])
        try await bob.sharedEngine.sendChanges()   // send without fetching first: the server has moved on

        let conflict = try #require(conflicts.all.first)
        #expect(conflicts.all.count == 1)
        #expect(conflict.serverRecord["text"] as? String == "Ada's text", "the conflict carries the server record")
        #expect(conflict.serverRecord["color"] as? String == "red")
        #expect(conflict.localRecord["text"] as? String == "Bob's text")
        #expect(Set(conflict.changedKeys) == ["text", "pinned"])

        // The merge was queued again; the next send succeeds, and both converge.
        try await bob.sync()
        try await ada.sync()
        for (store, id) in [(ada, noteID), (bob, bobNoteID)] {
            let note = try #require(try store.record(for: id))
            #expect(note["text"] as? String == "Bob's text")
            #expect(note["color"] as? String == "red", "Ada's other change survived the merge")
            #expect(note["pinned"] as? Int64 == 1)
        }
        #expect(!bob.hasUnsentChanges)
    }

    /// K22: the owner deletes a note while Bob edits it offline. The deletion wins, and Bob's
    /// store says which local edit it dropped, with the record, so nothing goes silently.
    @Test func anEditToARecordDeletedOnTheServerIsReportedNotLostSilently() async throws {
        let server = TestServer.shared
        let dropped = DroppedLog()
        let ada = try makeStore(server.ada, automaticallySync: false)
        let url = try temporaryStoreURL()
        let bob = try LocalStore(container: server.bob, configuration: .init(fileURL: url, automaticallySync: false, observer: { change in
            if case .deletedWhileEdited(let record) = change { dropped.add(record) }
        }))
        let (noteID, _) = try await shareNotebook(ada: ada, bob: bob)
        let bobNoteID = noteID.shared(owner: server.adaRecordName)

        try ada.delete([noteID])
        var bobNote = try #require(try bob.record(for: bobNoteID))
        bobNote["text"] = "Bob's precious edit"
        try bob.save([bobNote])
        try await ada.sync()
        try? await bob.sync()

        #expect(try bob.record(for: bobNoteID) == nil, "the deletion wins")
        let lost = try #require(dropped.all.first)
        #expect(dropped.all.count == 1)
        #expect(lost.recordID == bobNoteID)
        #expect(lost["text"] as? String == "Bob's precious edit")
    }
}

final class ConflictLog: @unchecked Sendable {
    private let lock = NSLock()
    private var conflicts: [LocalStore.Conflict] = []
    func add(_ conflict: LocalStore.Conflict) { lock.withLock { conflicts.append(conflict) } }
    var all: [LocalStore.Conflict] { lock.withLock { conflicts } }
}

final class DroppedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var records: [Record] = []
    func add(_ record: Record) { lock.withLock { records.append(record) } }
    var all: [Record] { lock.withLock { records } }
}
