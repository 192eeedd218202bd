import Foundation
import Testing
import Tandem

/// A create sent with no answer (K25) may be on the server, and another device may have deleted
/// it since. A feed read from a token shows that deletion; a listing from the start (an expired
/// token, or a participant's token after their shares in the zone changed) has no tombstones, so
/// the store treats such a create as deleted when the listing lacks it (K32 (d), K22).
/// Real server on loopback; a fault proxy drops the answer.
@Suite("LocalStore unconfirmed creates", .serialized)
struct LocalStoreUnconfirmedCreateTests {
    @Test func aCreateWhoseAnswerWasLostStaysDeletedAfterAListingFromTheStart() async throws {
        // History is kept for one second, so device one's tokens expire while it is offline.
        let server = try TestServer(extraArguments: ["--change-retention", "1"])
        defer { server.kill() }
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
        #expect(try two.record(for: id) != nil, "the create reached the server")
        try two.delete([id])
        try await two.sync()                                           // acknowledged deletion
        try await Task.sleep(nanoseconds: 2_500_000_000)               // its tombstone is purged: one's tokens expire
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await one.sync()                                           // zone listed from the start, without the record
        try await two.sync()

        await #expect(throws: TandemError.self, "deletion wins (K22)") { try await server.ada.privateDatabase.record(for: id) }
        #expect(try one.record(for: id) == nil)
        #expect(try two.record(for: id) == nil)
        #expect(!one.hasUnsentChanges)
        #expect(changes.all.contains { change in
            if case .deletedWhileEdited(let record) = change { record.recordID == id && record["title"] as? String == "created once" } else { false }
        }, "the dropped create is reported with the record")
    }

    /// The other side of the rule: a create whose answer was lost and that nobody deleted is in
    /// the listing, so it is kept (acknowledged by the listing, not sent again, no event).
    @Test func aCreateWhoseAnswerWasLostAndThatIsListedIsKept() async throws {
        let server = try TestServer(extraArguments: ["--change-retention", "1"])
        defer { server.kill() }
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let (one, changes) = try device(server.container(token: server.adaToken, proxy: proxy))
        let (two, _) = try device(server.ada)
        let existing = try await sharedRecord(on: one, and: two)

        let id = Record.ID(recordName: unique("lost-answer"), zoneID: existing.zoneID)
        var note = Record(recordType: "Note", recordID: id)
        note["title"] = "created once"
        try one.save([note])
        proxy.update { $0.dropNextAnswerPaths = ["records/modify"]; $0.offlineAfterDrop = true }
        await #expect(throws: TandemError.self) { try await one.privateEngine.sendChanges() }   // applied, answer lost
        try await edit(two, existing) { $0["title"] = "a later change" }    // history moves on
        try await Task.sleep(nanoseconds: 2_500_000_000)
        proxy.update { $0.offline = false; $0.offlineAfterDrop = false }
        try await one.sync()

        #expect(try one.record(for: id)?["title"] as? String == "created once")
        #expect(try one.record(for: id)?.recordChangeTag != nil, "the listing acknowledged it")
        #expect(!one.hasUnsentChanges)
        #expect(!changes.all.contains { if case .deletedWhileEdited = $0 { true } else { false } })
        #expect(try await server.ada.privateDatabase.record(for: id)["title"] as? String == "created once")
    }
}
