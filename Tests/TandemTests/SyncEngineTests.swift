import Foundation
import Testing
import Tandem

/// One device of a user: a dictionary standing in for the local store, the engine's delegate.
actor Device: SyncEngineDelegate {
    var records: [Record.ID: Record] = [:]
    var fetched: [Record] = []
    var deletions: [SyncEngine.FetchedRecordZoneChanges.Deletion] = []
    var sent: [SyncEngine.SentRecordZoneChanges] = []
    var sentZones: [SyncEngine.SentDatabaseChanges] = []
    var fetchRuns = 0
    var lastState: SyncEngine.State.Serialization?
    /// On `serverRecordChanged`: keep the server's record, put our title after its title, send again.
    var mergesConflicts = true
    /// Zones being listed again from the start (expired token), with the records seen so far.
    var relisting: [RecordZone.ID: Set<Record.ID>] = [:]
    var restartedZones: [RecordZone.ID] = []
    var zoneDeletions: [SyncEngine.FetchedDatabaseChanges.Deletion] = []

    init(records: [Record.ID: Record] = [:]) { self.records = records }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        switch event {
        case .stateUpdate(let serialization): lastState = serialization
        case .fetchedRecordZoneChanges(let changes):
            for record in changes.modifications {
                records[record.recordID] = record
                relisting[record.recordID.zoneID]?.insert(record.recordID)
            }
            for deletion in changes.deletions { records[deletion.recordID] = nil }
            fetched += changes.modifications
            deletions += changes.deletions
        case .sentRecordZoneChanges(let changes):
            sent.append(changes)
            for record in changes.savedRecords { records[record.recordID] = record }
            for failure in changes.failedRecordSaves where failure.error.code == .serverRecordChanged && mergesConflicts {
                guard var merged = failure.error.serverRecord else { continue }
                merged["title"] = "\(merged["title"] as? String ?? "") + \(failure.record["title"] as? String ?? "")"
                records[merged.recordID] = merged
                syncEngine.state.add(pendingRecordZoneChanges: [.saveRecord(merged.recordID)])
            }
        case .sentDatabaseChanges(let changes): sentZones.append(changes)
        case .fetchedDatabaseChanges(let changes):
            zoneDeletions += changes.deletions
            for deletion in changes.deletions {
                for id in records.keys where id.zoneID == deletion.zoneID { records[id] = nil }
            }
        case .recordZoneChangesRestarted(let zoneID):
            relisting[zoneID] = []
            restartedZones.append(zoneID)
        case .didFetchRecordZoneChanges(let zoneID, nil):
            // After a full listing, what was not listed is gone.
            if let listed = relisting.removeValue(forKey: zoneID) {
                for id in records.keys where id.zoneID == zoneID && !listed.contains(id) { records[id] = nil }
            }
        case .didFetchChanges: fetchRuns += 1
        default: break
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async -> SyncEngine.RecordZoneChangeBatch? {
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { id in await self.records[id] }
    }

    /// Edits (or creates) a record locally and queues its save.
    func edit(_ id: Record.ID, title: String, engine: SyncEngine) {
        var record = records[id] ?? Record(recordType: "Note", recordID: id)
        record["title"] = title
        records[id] = record
        engine.state.add(pendingRecordZoneChanges: [.saveRecord(id)])
    }

    func delete(_ id: Record.ID, engine: SyncEngine) {
        records[id] = nil
        engine.state.add(pendingRecordZoneChanges: [.deleteRecord(id)])
    }

    func title(_ id: Record.ID) -> String? { records[id]?["title"] as? String }
    func resetLog() { fetched = []; deletions = []; sent = []; sentZones = [] }
}

/// Polls `condition` until it holds or `seconds` pass.
func eventually(_ seconds: Double, _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 50_000_000)
    }
    return await condition()
}

/// Two devices of the same user (Ada), each with its own engine on her private database, against
/// a server of their own (so the database feed holds only what the test wrote).
@Suite("SyncEngine")
struct SyncEngineTests {
    func engine(_ server: TestServer, _ device: Device, state: SyncEngine.State.Serialization? = nil,
                automatic: Bool = false, deviceID: String = unique("device")) -> SyncEngine {
        let container = server.container(token: server.adaToken, deviceID: deviceID)
        return SyncEngine(configuration: .init(database: container.privateDatabase, stateSerialization: state,
                                               delegate: device, automaticallySync: automatic))
    }

    @Test func savesAndDeletesPropagateBetweenDevices() async throws {
        let server = try TestServer()
        let (a, b) = (Device(), Device())
        let (engineA, engineB) = (engine(server, a), engine(server, b))
        let zone = RecordZone(zoneName: "Notes")
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        let ids = (1...3).map { Record.ID(recordName: "note-\($0)", zoneID: zone.zoneID) }
        for (n, id) in ids.enumerated() { await a.edit(id, title: "note \(n + 1)", engine: engineA) }
        try await engineA.sendChanges()

        #expect(await a.sentZones.first?.savedZones.map(\.zoneID) == [zone.zoneID])
        #expect(Set(await a.sent.flatMap(\.savedRecords).map(\.recordID)) == Set(ids))
        #expect(await a.sent.flatMap(\.failedRecordSaves).isEmpty)
        #expect(engineA.state.pendingRecordZoneChanges.isEmpty && engineA.state.pendingDatabaseChanges.isEmpty)
        #expect(await a.records[ids[0]]?.recordChangeTag != nil, "saved records come back with their change tags")

        try await engineB.fetchChanges()
        #expect(await b.title(ids[0]) == "note 1")
        #expect(Set(await b.fetched.map(\.recordID)) == Set(ids))
        #expect(await b.lastState != nil, "a fetch ends with a stateUpdate")

        await a.delete(ids[1], engine: engineA)
        await a.edit(ids[2], title: "note 3, edited", engine: engineA)
        try await engineA.sendChanges()
        #expect(await a.sent.last?.deletedRecordIDs == [ids[1]])
        await b.resetLog()
        try await engineB.fetchChanges()
        #expect(await b.deletions.map(\.recordID) == [ids[1]])
        #expect(await b.deletions.map(\.recordType) == ["Note"])
        #expect(await b.fetched.map(\.recordID) == [ids[2]], "only what changed since B's tokens")
        #expect(await b.records[ids[1]] == nil)
        #expect(await b.title(ids[2]) == "note 3, edited")
    }

    @Test func sharedDatabaseEngineSeesTheOwnersZoneAndItsDeletion() async throws {
        let server = try TestServer()
        let (ada, bob) = (Device(), Device())
        let adaEngine = engine(server, ada)
        let bobContainer = server.container(token: server.bobToken)
        let bobEngine = SyncEngine(configuration: .init(database: bobContainer.sharedDatabase, stateSerialization: nil,
                                                        delegate: bob, automaticallySync: false))
        let zone = RecordZone(zoneName: "Trips")
        let tripID = Record.ID(recordName: "lisbon", zoneID: zone.zoneID)
        adaEngine.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        await ada.edit(tripID, title: "Lisbon", engine: adaEngine)
        try await adaEngine.sendChanges()

        // Sharing itself goes through the client API (the engine only moves records).
        let adaDB = server.ada.privateDatabase
        let root = try await adaDB.record(for: tripID)
        var share = Share(rootRecord: root)
        share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
        let saved = try await adaDB.modifyRecords(saving: [root, share.record], deleting: [])
        let url = try #require(Share(try saved.saveResults[share.recordID]!.get())?.url)
        _ = try await bobContainer.accept(try await bobContainer.shareMetadata(for: url))

        try await bobEngine.fetchChanges()
        let sharedTripID = Record.ID(recordName: "lisbon", zoneID: RecordZone.ID(zoneName: "Trips", ownerName: server.adaRecordName))
        #expect(await bob.title(sharedTripID) == "Lisbon")

        await bob.edit(sharedTripID, title: "Lisbon in May", engine: bobEngine)
        try await bobEngine.sendChanges()
        #expect(await bob.sent.flatMap(\.failedRecordSaves).isEmpty)
        try await adaEngine.fetchChanges()
        #expect(await ada.title(tripID) == "Lisbon in May")

        adaEngine.state.add(pendingDatabaseChanges: [.deleteZone(zone.zoneID)])
        try await adaEngine.sendChanges()
        #expect(await ada.sentZones.last?.deletedZoneIDs == [zone.zoneID])
        try await bobEngine.fetchChanges()
        #expect(await bob.zoneDeletions.map(\.zoneID) == [sharedTripID.zoneID])
        #expect(await bob.records.isEmpty)
    }

    @Test func largeQueuesGoInBatchesOfAtMost200() async throws {
        let server = try TestServer()
        let (a, b) = (Device(), Device())
        let (engineA, engineB) = (engine(server, a), engine(server, b))
        let zone = RecordZone(zoneName: "Bulk")
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        for n in 0..<250 { await a.edit(Record.ID(recordName: "bulk-\(n)", zoneID: zone.zoneID), title: "\(n)", engine: engineA) }
        try await engineA.sendChanges()
        #expect(await a.sent.map(\.savedRecords.count) == [200, 50])
        #expect(engineA.state.pendingRecordZoneChanges.isEmpty)
        try await engineB.fetchChanges()
        #expect(await b.records.count == 250)
    }

    @Test func conflictIsReportedWithTheServerRecordAndTheMergeIsSent() async throws {
        let server = try TestServer()
        let (a, b) = (Device(), Device())
        let (engineA, engineB) = (engine(server, a), engine(server, b))
        let zone = RecordZone(zoneName: "Shared")
        let id = Record.ID(recordName: "contested", zoneID: zone.zoneID)
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        await a.edit(id, title: "start", engine: engineA)
        try await engineA.sendChanges()
        try await engineB.fetchChanges()
        #expect(await b.title(id) == "start")

        await a.edit(id, title: "A", engine: engineA)
        await b.edit(id, title: "B", engine: engineB)
        try await engineA.sendChanges()
        try await engineB.sendChanges()

        let failures = await b.sent.flatMap(\.failedRecordSaves)
        #expect(failures.count == 1)
        #expect(failures.first?.error.code == .serverRecordChanged)
        #expect(failures.first?.error.serverRecord?["title"] as? String == "A")
        // B merged and queued the save again; the same run sent it.
        #expect(await b.sent.flatMap(\.savedRecords).map { $0["title"] as? String } == ["A + B"])
        #expect(engineB.state.pendingRecordZoneChanges.isEmpty)

        try await engineA.fetchChanges()
        #expect(await a.title(id) == "A + B")
    }

    @Test func serializedStateContinuesWhereItLeftOff() async throws {
        let server = try TestServer()
        let (a, b) = (Device(), Device())
        let engineA = engine(server, a)
        let zone = RecordZone(zoneName: "Journal")
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        let ids = (1...5).map { Record.ID(recordName: "day-\($0)", zoneID: zone.zoneID) }
        for id in ids { await a.edit(id, title: id.recordName, engine: engineA) }
        try await engineA.sendChanges()

        var engineB: SyncEngine? = engine(server, b)
        try await engineB!.fetchChanges()
        #expect(await b.fetched.count == 5)
        // An edit queued but not sent must survive the restart too.
        await b.edit(ids[0], title: "edited offline", engine: engineB!)
        #expect(await eventually(5) { await b.lastState.map { !$0.pendingChangesAreEmpty } ?? false })
        let saved = try JSONEncoder().encode(await b.lastState!)
        engineB = nil

        // The app restarts: same local data, state from disk.
        let restored = try JSONDecoder().decode(SyncEngine.State.Serialization.self, from: saved)
        let b2 = Device(records: await b.records)
        let engineB2 = engine(server, b2, state: restored)
        #expect(engineB2.state.pendingRecordZoneChanges == [.saveRecord(ids[0])])

        try await engineB2.fetchChanges()
        #expect(await b2.fetched.isEmpty, "nothing is fetched again")

        await a.edit(ids[4], title: "day 5, later", engine: engineA)
        try await engineA.sendChanges()
        try await engineB2.fetchChanges()
        #expect(await b2.fetched.map(\.recordID) == [ids[4]])

        try await engineB2.sendChanges()
        #expect(await b2.sent.flatMap(\.savedRecords).map(\.recordID) == [ids[0]])
        try await engineA.fetchChanges()
        #expect(await a.title(ids[0]) == "edited offline")
    }

    @Test func expiredZoneTokenIsDroppedAndTheZoneListedAgain() async throws {
        // History is kept for one second, so B's token is older than a purged tombstone.
        let server = try TestServer(extraArguments: ["--change-retention", "1"])
        let (a, b) = (Device(), Device())
        let (engineA, engineB) = (engine(server, a), engine(server, b))
        let zone = RecordZone(zoneName: "Expiring")
        let ids = (1...3).map { Record.ID(recordName: "item-\($0)", zoneID: zone.zoneID) }
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        for id in ids { await a.edit(id, title: id.recordName, engine: engineA) }
        try await engineA.sendChanges()
        try await engineB.fetchChanges()
        #expect(await b.records.count == 3)

        await a.delete(ids[0], engine: engineA)
        await a.edit(ids[1], title: "changed", engine: engineA)
        try await engineA.sendChanges()
        try await Task.sleep(nanoseconds: 2_500_000_000)   // the tombstone is purged

        await b.resetLog()
        try await engineB.fetchChanges()
        #expect(await b.restartedZones == [zone.zoneID])
        #expect(Set(await b.fetched.map(\.recordID)) == [ids[1], ids[2]], "the zone is listed again from the start")
        #expect(await b.deletions.isEmpty, "a listing from the start has no tombstones (decisions S3)")
        #expect(await b.records.keys.sorted { $0.recordName < $1.recordName } == [ids[1], ids[2]],
                "the delegate dropped what the new listing did not hold")
        #expect(await b.title(ids[1]) == "changed")

        // The new token works: the next fetch brings nothing.
        await b.resetLog()
        try await engineB.fetchChanges()
        #expect(await b.fetched.isEmpty)
        #expect(await b.restartedZones.count == 1)
    }

    @Test func automaticSyncSendsAddedChangesAndFetchesOnPush() async throws {
        let server = try TestServer()
        let (a, b) = (Device(), Device())
        let engineA = engine(server, a, automatic: true)
        let engineB = engine(server, b, automatic: true)
        // Each engine fetches once its stream is connected; after that, only pushes make B fetch.
        // (Generous limits: with every suite running at once on two cores the pool is slow;
        // alone, the record arrives in well under a second.)
        try #require(await eventually(60) { let runs = (await a.fetchRuns, await b.fetchRuns); return runs.0 > 0 && runs.1 > 0 })
        let runsBefore = await b.fetchRuns

        let zone = RecordZone(zoneName: "Auto")
        let id = Record.ID(recordName: "pushed", zoneID: zone.zoneID)
        let start = Date()
        engineA.state.add(pendingDatabaseChanges: [.saveZone(zone)])
        await a.edit(id, title: "sent without sendChanges()", engine: engineA)
        let arrived = await eventually(30) { await b.title(id) == "sent without sendChanges()" }
        #expect(arrived, "B saw A's record without calling fetchChanges()")
        print("SyncEngine push: B had A's record \(Int(Date().timeIntervalSince(start) * 1000)) ms after A queued it")
        #expect(await b.fetchRuns > runsBefore, "a push made B fetch")
        #expect(engineA.state.pendingRecordZoneChanges.isEmpty)
        withExtendedLifetime((engineA, engineB)) {}
    }
}

extension SyncEngine.State.Serialization {
    /// Test peek: whether the serialization holds pending changes, through its Codable form.
    var pendingChangesAreEmpty: Bool {
        guard let data = try? JSONEncoder().encode(self),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return true }
        return (object["pendingRecordZoneChanges"] as? [Any])?.isEmpty ?? true
    }
}
