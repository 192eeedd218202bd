import Foundation
import Testing
import Tandem

/// Issue 23 item 11: related records follow a share (decisions R34–R37). The seed behaviour is
/// the Core Data + CloudKit session's "if object A relates to B, sharing A includes B":
/// `NSPersistentCloudKitContainer.share(_:to:)` moves the objects and their related objects.
@Suite("LocalStore: related records follow a share")
struct LocalStoreRelatedRecordsTests {
    /// Notes named `<tag>-<letter>` in the default zone, related by `build`, saved on `store` and,
    /// unless `send` is false, sent one by one in the order given (a parent must exist when set).
    private func notes(on store: LocalStore, _ tag: String, _ letters: [String], send: Bool = true,
                       build: (inout [String: Record]) -> Void) async throws -> [String: Record] {
        var made: [String: Record] = [:]
        for letter in letters {
            var note = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-\(letter)"))
            note["text"] = "note \(letter)"
            made[letter] = note
        }
        build(&made)
        for letter in letters {
            try store.save([made[letter]!])
            if send { try await store.sync() }
        }
        return made
    }

    private func moved(_ id: Record.ID, into zoneID: RecordZone.ID) -> Record.ID { Record.ID(recordName: id.recordName, zoneID: zoneID) }

    /// Whether the server holds the record (any failure, such as a zone deleted meanwhile, is "no").
    private func serverHolds(_ database: Database, _ id: Record.ID) async -> Bool {
        (try? await database.record(for: id)) != nil
    }

    @Test func withDepthNilEveryRelatedRecordMovesWithItsReferencesRewrittenAndUnsentEditsKept() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let tag = unique("chain")
        // A → B (reference field), B → C (reference list), D's parent is A (D relates to A), E apart.
        let n = try await notes(on: ada, tag, ["a", "b", "c", "d", "e"]) { n in
            n["a"]!["next"] = Reference(recordID: n["b"]!.recordID)
            n["b"]!["links"] = [Reference(recordID: n["c"]!.recordID)]
            n["d"]!.setParent(n["a"]!.recordID)
        }
        // An edit of C this device has not sent yet.
        try await edit(ada, n["c"]!.recordID, sync: false) { $0["text"] = "edited offline" }

        let (records, share) = try await ada.share([n["a"]!.recordID], to: nil)
        let zoneID = share.recordID.zoneID
        #expect(records.first?.recordID == moved(n["a"]!.recordID, into: zoneID), "the listed record comes first")
        #expect(Set(records.map(\.recordID.recordName)) == Set(["a", "b", "c", "d"].map { "\(tag)-\($0)" }))
        #expect(records.allSatisfy { $0.recordID.zoneID == zoneID })

        // References name the moved records, on the device and on the server.
        let a = try #require(try ada.record(for: moved(n["a"]!.recordID, into: zoneID)))
        #expect((a["next"] as? Reference)?.recordID == moved(n["b"]!.recordID, into: zoneID))
        let b = try await server.ada.privateDatabase.record(for: moved(n["b"]!.recordID, into: zoneID))
        #expect((b["links"] as? [Reference])?.map(\.recordID) == [moved(n["c"]!.recordID, into: zoneID)])
        let d = try await server.ada.privateDatabase.record(for: moved(n["d"]!.recordID, into: zoneID))
        #expect(d.parent?.recordID == moved(n["a"]!.recordID, into: zoneID))
        let c = try await server.ada.privateDatabase.record(for: moved(n["c"]!.recordID, into: zoneID))
        #expect(c["text"] as? String == "edited offline", "the unsent edit moved with the record")

        // The originals are gone, locally at once and on the server after the next send; E stays.
        for letter in ["a", "b", "c", "d"] { #expect(try ada.record(for: n[letter]!.recordID) == nil) }
        #expect(try ada.record(for: n["e"]!.recordID) != nil)
        try await ada.sync()
        for letter in ["a", "b", "c", "d"] { #expect(await !serverHolds(server.ada.privateDatabase, n[letter]!.recordID)) }
        #expect(await serverHolds(server.ada.privateDatabase, n["e"]!.recordID))
    }

    @Test func depthOneStopsAtTheRecordsNextToTheListedOnes() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let tag = unique("depth")
        let n = try await notes(on: ada, tag, ["a", "b", "c", "x", "y"]) { n in
            n["a"]!["next"] = Reference(recordID: n["b"]!.recordID)
            n["b"]!["next"] = Reference(recordID: n["c"]!.recordID)
            n["x"]!["next"] = Reference(recordID: n["y"]!.recordID)
        }

        let (records, share) = try await ada.share([n["a"]!.recordID], to: nil, depth: 1)
        let zoneID = share.recordID.zoneID
        #expect(records.map(\.recordID.recordName) == ["\(tag)-a", "\(tag)-b"])
        #expect(try ada.record(for: n["c"]!.recordID) != nil, "C is two steps away: it stays")
        let b = try #require(try ada.record(for: moved(n["b"]!.recordID, into: zoneID)))
        #expect((b["next"] as? Reference)?.recordID == moved(n["c"]!.recordID, into: zoneID),
                "a reference to a record that stays keeps its name in the share's zone")
        try await ada.sync()
        #expect(await serverHolds(server.ada.privateDatabase, n["c"]!.recordID))
        #expect(await !serverHolds(server.ada.privateDatabase, n["b"]!.recordID))

        // Depth 0: only the listed record.
        let (only, _) = try await ada.share([n["x"]!.recordID], to: nil, depth: 0)
        #expect(only.map(\.recordID.recordName) == ["\(tag)-x"])
        #expect(try ada.record(for: n["y"]!.recordID) != nil)
    }

    @Test func aCycleEndsAndEachRecordMovesOnce() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let tag = unique("cycle")
        // A → B → A, and A references itself; never sent, so created in the share's zone only.
        let n = try await notes(on: ada, tag, ["a", "b"], send: false) { n in
            n["a"]!["links"] = [Reference(recordID: n["a"]!.recordID), Reference(recordID: n["b"]!.recordID)]
            n["b"]!["next"] = Reference(recordID: n["a"]!.recordID)
        }

        let (records, share) = try await ada.share([n["a"]!.recordID, n["b"]!.recordID], to: nil)
        let zoneID = share.recordID.zoneID
        #expect(records.map(\.recordID.recordName) == ["\(tag)-a", "\(tag)-b"])
        let a = try await server.ada.privateDatabase.record(for: moved(n["a"]!.recordID, into: zoneID))
        #expect((a["links"] as? [Reference])?.map(\.recordID) == [moved(n["a"]!.recordID, into: zoneID), moved(n["b"]!.recordID, into: zoneID)])
        try await ada.sync()
        #expect(await !serverHolds(server.ada.privateDatabase, n["a"]!.recordID), "never created in the default zone")
    }

    @Test func aFailedMoveLeavesEverythingWhereItWasWithUnsentEditsKept() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let tag = unique("fail")
        var first = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-first"))
        first["text"] = "first"
        try ada.save([first])
        let (_, share) = try await ada.share([first.recordID], to: nil)
        let zoneID = share.recordID.zoneID
        let n = try await notes(on: ada, tag, ["a", "b", "c"]) { n in
            n["a"]!["next"] = Reference(recordID: n["b"]!.recordID)
            n["b"]!["next"] = Reference(recordID: n["c"]!.recordID)
        }
        try await edit(ada, n["b"]!.recordID, sync: false) { $0["text"] = "edited before sharing" }
        // Another device put a record named as C into the share's zone; this one has not fetched it.
        var other = Record(recordType: "Note", recordID: moved(n["c"]!.recordID, into: zoneID))
        other["text"] = "made elsewhere"
        _ = try await server.ada.privateDatabase.save(other)

        await #expect(throws: TandemError.self) { try await ada.share([n["a"]!.recordID], to: share) }
        for letter in ["a", "b", "c"] {
            #expect(try ada.record(for: n[letter]!.recordID) != nil, "\(letter) stays in the default zone")
            #expect(await serverHolds(server.ada.privateDatabase, n[letter]!.recordID))
        }
        #expect(try ada.record(for: moved(n["a"]!.recordID, into: zoneID)) == nil)
        #expect(await !serverHolds(server.ada.privateDatabase, moved(n["a"]!.recordID, into: zoneID)), "nothing half-moved on the server")
        #expect(await !serverHolds(server.ada.privateDatabase, moved(n["b"]!.recordID, into: zoneID)))
        #expect(ada.hasUnsentChanges, "B's edit is still waiting")
        try await ada.sync()
        #expect(try await server.ada.privateDatabase.record(for: n["b"]!.recordID)["text"] as? String == "edited before sharing")

        // A new share the server refuses (a VALIDATE reference to a record that stays) leaves
        // no zone behind holding the copy.
        var x = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-x"))
        let y = Record(recordType: "Note", recordID: Record.ID(recordName: "\(tag)-y"))
        x["must"] = Reference(recordID: y.recordID, action: .validate)
        try ada.save([y])
        try await ada.sync()
        try ada.save([x])
        try await ada.sync()
        await #expect(throws: TandemError.self) { try await ada.share([x.recordID], to: nil, depth: 0) }
        #expect(try ada.record(for: x.recordID) != nil)
        #expect(await serverHolds(server.ada.privateDatabase, x.recordID))
        for zone in try await server.ada.privateDatabase.allRecordZones() where zone.zoneID.zoneName.hasPrefix(LocalStore.shareZonePrefix) {
            #expect(await !serverHolds(server.ada.privateDatabase, moved(x.recordID, into: zone.zoneID)))
        }
        #expect(try ada.zones(in: .private).filter { $0 != x.recordID.zoneID }.allSatisfy { try ada.record(for: moved(x.recordID, into: $0)) == nil })
    }

    @Test func refusalsBeforeAnyRequestMoveNothing() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let tag = unique("refuse")
        // Q, which would stay, holds a DELETE_SELF reference to P: deleting P's original would delete Q.
        let n = try await notes(on: ada, tag, ["p", "q"], send: false) { n in n["q"]!["owner"] = Reference(recordID: n["p"]!.recordID, action: .deleteSelf) }
        await #expect(throws: TandemError.self) { try await ada.share([n["p"]!.recordID], to: nil, depth: 0) }
        #expect(try ada.record(for: n["p"]!.recordID) != nil)
        // With every related record it is fine: Q follows.
        let (records, _) = try await ada.share([n["p"]!.recordID], to: nil)
        #expect(Set(records.map(\.recordID.recordName)) == ["\(tag)-p", "\(tag)-q"])

        // A record in another share stays there: sharing it elsewhere is alreadyShared.
        let inShare = try #require(records.first { $0.recordID.recordName == "\(tag)-p" })
        do throws(TandemError) {
            _ = try await ada.share([inShare.recordID], to: nil)
            Issue.record("a shared record was moved into a second share")
        } catch {
            #expect(error.code == .alreadyShared)
        }
        #expect(try ada.record(for: inShare.recordID) != nil)
        await #expect(throws: TandemError.self) { try await ada.share([n["p"]!.recordID], to: nil, depth: -1) }
    }

    @Test func anotherDeviceSeesTheMovedRecordsInTheSharedZoneAfterAccepting() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada)
        let bob = try makeStore(server.bob)
        let tag = unique("seen")
        let n = try await notes(on: ada, tag, ["a", "b", "c"], send: false) { n in
            n["a"]!["next"] = Reference(recordID: n["b"]!.recordID)
            n["c"]!.setParent(n["b"]!.recordID)
        }
        // Listing the child: its parent B, then A (which references B), follow; B is saved first.
        let (_, share) = try await ada.share([n["c"]!.recordID], to: nil)
        var invited = share
        invited.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
        let saved = try await ada.persistUpdatedShare(invited)
        let url = try #require(saved.url)
        try await bob.acceptShareInvitations(from: [try await bob.container.shareMetadata(for: url)])

        let sharedZone = RecordZone.ID(zoneName: share.recordID.zoneID.zoneName, ownerName: server.adaRecordName)
        let a = try #require(try bob.record(for: moved(n["a"]!.recordID, into: sharedZone)))
        let next = try #require(a["next"] as? Reference)
        #expect(next.recordID == moved(n["b"]!.recordID, into: sharedZone))
        #expect(try bob.record(for: next.recordID)?["text"] as? String == "note b", "the reference resolves on Bob's device")
        #expect(try bob.record(for: moved(n["c"]!.recordID, into: sharedZone))?.parent?.recordID.recordName == "\(tag)-b")
    }
}
