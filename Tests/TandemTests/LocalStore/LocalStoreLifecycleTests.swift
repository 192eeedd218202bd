import Foundation
import Testing
import Tandem

/// Zones leaving the store: purged by the user, deleted while the device's database token
/// expired, and a different account opening the same file.
@Suite("LocalStore lifecycle")
struct LocalStoreLifecycleTests {
    @Test func purgeZoneRemovesTheZoneHereAndOnTheServer() async throws {
        let server = TestServer.shared
        let ada = try makeStore(server.ada, automaticallySync: false)
        let zoneID = RecordZone.ID(zoneName: unique("scratch"))
        var note = Record(recordType: "Note", recordID: Record.ID(recordName: "n", zoneID: zoneID))
        note["text"] = "scratch"
        try ada.save([note])   // a new private zone is created before its record is sent
        try await ada.sync()
        #expect(try await server.ada.privateDatabase.record(for: note.recordID)["text"] as? String == "scratch")
        #expect(try ada.zones(in: .private).contains(zoneID))

        try await ada.purgeZone(zoneID)
        #expect(try ada.record(for: note.recordID) == nil)
        #expect(try !ada.zones(in: .private).contains(zoneID))
        await #expect(throws: TandemError.self) { try await server.ada.privateDatabase.recordZone(for: zoneID) }
    }

    @Test func anExpiredDatabaseTokenStillReportsZonesDeletedMeanwhile() async throws {
        // History is kept for one second, so the second device's database token expires.
        let server = try TestServer(extraArguments: ["--change-retention", "1"])
        let device1 = try makeStore(server.ada, automaticallySync: false)
        let device2 = try makeStore(server.ada, automaticallySync: false)
        let (keep, drop) = (RecordZone.ID(zoneName: "keep"), RecordZone.ID(zoneName: "drop"))
        for zoneID in [keep, drop] {
            var note = Record(recordType: "Note", recordID: Record.ID(recordName: "n-\(zoneID.zoneName)", zoneID: zoneID))
            note["text"] = zoneID.zoneName
            try device1.save([note])
        }
        try await device1.sync()
        try await device2.sync()
        #expect(try Set(noteTexts(device2).values) == ["keep", "drop"])

        try await device1.purgeZone(drop)
        try await Task.sleep(nanoseconds: 2_500_000_000)   // the zone's tombstone is purged
        try await device2.sync()
        #expect(try noteTexts(device2) == ["n-keep": "keep"], "the zone missing from the listing from the start is removed")
        #expect(try !device2.zones(in: .private).contains(drop))
    }

    @Test func anotherAccountOpeningTheFileStartsFromNothing() async throws {
        let server = TestServer.shared
        let url = try temporaryStoreURL()
        let name = unique("ada-private")
        do {
            let ada = try LocalStore(container: server.ada, fileURL: url, automaticallySync: false)
            var note = Record(recordType: "Note", recordID: Record.ID(recordName: name))
            note["text"] = "Ada's private note"
            try ada.save([note])
            try await ada.sync()
            #expect(try ada.record(for: note.recordID) != nil)
            await ada.close()
        }
        let changes = ChangeLog()
        let bob = try LocalStore(container: server.bob, configuration: .init(fileURL: url, automaticallySync: false,
                                                                               observer: { changes.add($0) }))
        try await bob.sync()
        #expect(try bob.record(for: Record.ID(recordName: name)) == nil, "Ada's data is gone from the file")
        #expect(changes.all.contains { if case .accountChanged(.private) = $0 { true } else { false } })
        #expect(try noteTexts(bob, in: [.private])[name] == nil)
    }
}

extension LocalStoreLifecycleTests {
    /// K29: one store per file; `close()` waits for the engines' in-flight work and frees the file.
    @Test func aSecondOpenOfTheSameFileFailsUntilTheFirstIsClosed() async throws {
        let server = TestServer.shared
        let proxy = try FaultProxy(upstreamPort: { server.port })
        let url = try temporaryStoreURL()
        let first = try LocalStore(container: server.container(token: server.adaToken, proxy: proxy), fileURL: url, automaticallySync: false)
        #expect(throws: TandemError.self) { try LocalStore(container: server.ada, fileURL: url, automaticallySync: false) }

        var note = Record(recordType: "Note", recordID: Record.ID(recordName: unique("closing")))
        note["text"] = "sent while closing"
        try first.save([note])
        proxy.update { $0.holdPaths = ["records/modify"] }
        let send = Task { try await first.privateEngine.sendChanges() }
        try await proxy.waitForHeldAnswer()
        let closed = Task { await first.close() }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(throws: TandemError.self, "still closing: the send is in flight") {
            try LocalStore(container: server.ada, fileURL: url, automaticallySync: false)
        }
        proxy.releaseHeld()
        await closed.value
        _ = try await send.value
        #expect(first.privateEngine.isStopped)
        await #expect(throws: TandemError.self) { try await first.privateEngine.fetchChanges() }

        let second = try LocalStore(container: server.ada, fileURL: url, automaticallySync: false)
        #expect(try second.record(for: note.recordID)?.recordChangeTag != nil, "the answer that came while closing was written")
        #expect(!second.hasUnsentChanges)
        await second.close()
    }
}

final class ChangeLog: @unchecked Sendable {
    private let lock = NSLock()
    private var changes: [LocalStore.Change] = []
    func add(_ change: LocalStore.Change) { lock.withLock { changes.append(change) } }
    var all: [LocalStore.Change] { lock.withLock { changes } }
}
