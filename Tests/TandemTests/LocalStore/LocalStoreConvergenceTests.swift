import Foundation
import TandemTestSupport
import Testing
import Tandem

/// Seeded random runs (issue 15): three devices (two of Ada's, one of Bob's, a READ_WRITE
/// participant), each with its own store file and a fault proxy (offline spells, latency, 5 %
/// dropped answers, duplicated requests), random creates, same- and different-field edits,
/// deletes, re-saves of a record just deleted (sequence 3), syncs, relaunches, Bob removed and
/// re-added by Ada's store (`persistUpdatedShare`) and accepting through his
/// (`acceptShareInvitations`), and one server SIGKILL. Every value written is unique (device and
/// step); the proxies pass every `records/modify` answer the server gave (delivered, dropped or
/// duplicated) to a `ServerHistory`, and the zone's feed is read after every step, so the
/// server's versions of each record are known in order. At the end the faults stop, everyone
/// syncs to quiescence, and the invariants of K32 are checked (`ConvergenceChecks`): no value
/// comes back after being replaced (a), no write or create is lost without an event to the
/// device that made it (b), every store equals the server (c), a record the server deleted stays
/// deleted (d). A failure prints its seed; `TANDEM_SEEDS=N` (make soak) runs N seeds from
/// `TANDEM_SEED_BASE`.
@Suite("LocalStore convergence", .serialized)
struct LocalStoreConvergenceTests {
    static let seeds: [UInt64] = {
        let environment = ProcessInfo.processInfo.environment
        let count = environment["TANDEM_SEEDS"].flatMap(Int.init) ?? 3
        let base = environment["TANDEM_SEED_BASE"].flatMap(UInt64.init) ?? 1
        return (0..<UInt64(count)).map { base + $0 }
    }()
    static let steps = ProcessInfo.processInfo.environment["TANDEM_STEPS"].flatMap(Int.init) ?? 40

    @Test(arguments: seeds)
    func devicesConvergeWithoutLosingAcknowledgedData(seed: UInt64) async throws {
        let run = try LocalStoreRun(seed: seed, steps: Self.steps)
        do {
            try await run.run()
        } catch {
            Issue.record("seed \(seed) failed (rerun: TANDEM_SEEDS=1 TANDEM_SEED_BASE=\(seed)): \(error)")
        }
        await run.cleanUp()
    }
}

/// One seeded run.
final class LocalStoreRun: @unchecked Sendable {
    struct Device {
        var name: String
        var token: String
        var url: URL
        var proxy: FaultProxy
        var store: LocalStore
        var changes: ChangeLog
        var isBob: Bool
    }

    let seed: UInt64
    let steps: Int
    var random: SeededGenerator
    let server: TestServer
    var devices: [Device] = []
    var zoneID = RecordZone.ID(zoneName: "z")
    var names: [String] = []
    var counter = 0
    var log: [String] = []
    /// What the server did (answers seen by the proxies, the feed read after every step).
    let history = ServerHistory()
    /// What the app did.
    var app = AppLog()
    private var pollToken: ServerChangeToken?

    init(seed: UInt64, steps: Int) throws {
        self.seed = seed
        self.steps = steps
        random = SeededGenerator(seed: seed)
        server = try TestServer()
    }

    func open(_ device: inout Device) throws {
        let changes = device.changes
        let container = server.container(token: device.token, proxy: device.proxy)
        device.store = try LocalStore(container: container, configuration: .init(fileURL: device.url, automaticallySync: true, sendDelay: 0.05,
                                                                                 observer: { changes.add($0) }))
    }

    func id(_ name: String, for device: Device) -> Record.ID {
        device.isBob ? Record.ID(recordName: name, zoneID: RecordZone.ID(zoneName: zoneID.zoneName, ownerName: server.adaRecordName))
            : Record.ID(recordName: name, zoneID: zoneID)
    }

    func run() async throws {
        let started = Date()
        defer { print("convergence seed \(seed): \(steps) steps in \(Int(Date().timeIntervalSince(started) * 1000)) ms") }
        // Setup without faults: Ada's first device shares a notebook with Bob; everyone syncs.
        let history = history
        for (index, (token, isBob)) in [(server.adaToken, false), (server.adaToken, false), (server.bobToken, true)].enumerated() {
            let proxy = try FaultProxy(upstreamPort: { [server] in server.port }, seed: seed &* 31 &+ UInt64(index),
                                       answerObserver: { history.answer($0, $1, $2) })
            let changes = ChangeLog()
            let url = try temporaryStoreURL()
            let store = try LocalStore(container: server.container(token: token, proxy: proxy),
                                       configuration: .init(fileURL: url, automaticallySync: true, sendDelay: 0.05, observer: { changes.add($0) }))
            devices.append(Device(name: "d\(index)", token: token, url: url, proxy: proxy, store: store, changes: changes, isBob: isBob))
        }
        let (noteID, _) = try await shareNotebook(ada: devices[0].store, bob: devices[2].store)
        zoneID = noteID.zoneID
        history.follow(zoneName: zoneID.zoneName)
        names = [noteID.recordName]
        for device in devices { try await device.store.sync() }
        try await poll()
        print("convergence seed \(seed): set up in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        for index in devices.indices {
            devices[index].proxy.update { $0.dropRate = 0.05; $0.duplicateRate = 0.03; $0.latency = 0.005 }
        }

        let killAt = steps / 2
        for step in 0..<steps {
            if step == killAt {
                log.append("\(step): server SIGKILL and restart")
                server.kill()
                try await Task.sleep(nanoseconds: 300_000_000)
                try server.start()
            }
            let d = Int.random(in: 0..<devices.count, using: &random)
            let roll = Int.random(in: 0..<100, using: &random)
            let before = Date()
            try await act(step: step, device: d, roll: roll)
            let took = Date().timeIntervalSince(before)
            if ProcessInfo.processInfo.environment["TANDEM_PROXY_DEBUG"] != nil { print("\(Date()) \(log.last ?? "")") }
            if took > 1 { print("convergence seed \(seed) step \(step): \(log.last ?? "") took \(Int(took * 1000)) ms") }
            try? await poll()
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...30_000_000, using: &random))
        }
        for index in devices.indices {
            devices[index].proxy.update { $0 = FaultProxy.Faults() }
        }
        try await ensureBobIsIn()
        let ran = Date()
        try await quiesce()
        print("convergence seed \(seed): quiesced in \(Int(Date().timeIntervalSince(ran) * 1000)) ms")
        try await check()
    }

    /// Reads the zone's feed straight from the server (no proxy) since the last read.
    func poll() async throws {
        let database = server.ada.privateDatabase
        while true {
            let page = try await database.recordZoneChanges(inZoneWith: zoneID, since: pollToken)
            history.fetched(page.modifications, deletions: page.deletions.map(\.recordID.recordName))
            pollToken = page.changeToken
            if !page.moreComing { return }
        }
    }

    /// Closes the stores, stops the proxies and SIGKILLs the server, so nothing of this run
    /// outlives it (a server asked to stop with connections still open waits for them).
    func cleanUp() async {
        for device in devices { device.proxy.update { $0 = FaultProxy.Faults() } }
        let stores = devices.map(\.store)
        _ = try? await withTimeout(30) { for store in stores { await store.close() }; return true }
        for device in devices { device.proxy.stop() }
        server.kill()
    }

    func value(_ device: Device, _ step: Int) -> String { "\(device.name)-\(step)" }

    func act(step: Int, device d: Int, roll: Int) async throws {
        let device = devices[d]
        let store = device.store
        let visible = names.filter { (try? store.record(for: id($0, for: device))) != nil }
        func pick() -> String { visible[Int.random(in: 0..<visible.count, using: &random)] }
        func key() -> String { ["title", "body", "color"][Int.random(in: 0..<3, using: &random)] }
        switch roll {
        case 0..<30 where !visible.isEmpty:
            let name = pick()
            let key = key()
            guard var record = try store.record(for: id(name, for: device)) else { return }
            record[key] = value(device, step)
            app.writes.append(.init(step: step, device: device.name, name: name, key: key, value: value(device, step), isCreate: false,
                                    eventsBefore: device.changes.all.count))
            log.append("\(step) \(Date()): \(device.name) edits \(name).\(key)")
            try store.save([record])
        case 30..<47:
            counter += 1
            let name = "n\(seed)-\(counter)"
            var record = Record(recordType: "Note", recordID: id(name, for: device))
            record["title"] = value(device, step)
            app.writes.append(.init(step: step, device: device.name, name: name, key: "title", value: value(device, step), isCreate: true,
                                    eventsBefore: device.changes.all.count))
            names.append(name)
            log.append("\(step) \(Date()): \(device.name) creates \(name)")
            try store.save([record])
        case 47..<54 where !visible.isEmpty:
            let name = pick()
            app.deletions.append(.init(step: step, device: device.name, name: name))
            log.append("\(step) \(Date()): \(device.name) deletes \(name)")
            try store.delete([id(name, for: device)])
        case 54..<60 where !visible.isEmpty:
            // Issue 15's sequence 3: the app deletes a record, then saves its copy again with one
            // key changed (an undo with an edit): only that key may be sent (K24).
            let name = pick()
            let key = key()
            guard var copy = try store.record(for: id(name, for: device)) else { return }
            copy[key] = value(device, step)
            app.writes.append(.init(step: step, device: device.name, name: name, key: key, value: value(device, step), isCreate: false,
                                    eventsBefore: device.changes.all.count))
            log.append("\(step) \(Date()): \(device.name) deletes \(name) and saves it again with \(key) changed")
            try store.delete([copy.recordID])
            try store.save([copy])
        case 60..<70:
            log.append("\(step): \(device.name) syncs")
            try? await store.sync()
        case 70..<78:
            let offline = !device.proxy.current.offline
            log.append("\(step): \(device.name) \(offline ? "goes offline" : "comes online")")
            device.proxy.update { $0.offline = offline }
        case 78..<84:
            log.append("\(step): \(device.name) relaunches")
            await store.close()
            try open(&devices[d])
        case 84..<100:
            // Sharing through the stores' own API: one of Ada's devices removes Bob or invites him
            // again (persistUpdatedShare, K31); Bob's device accepts (acceptShareInvitations).
            let status = try? await bobStatus()
            let ada = d == 2 ? Int.random(in: 0..<2, using: &random) : d
            if status == .accepted, roll < 90 {
                do {
                    try await setBob(present: false, via: ada)
                    log.append("\(step): Ada (\(devices[ada].name)) removes Bob")
                } catch { log.append("\(step): Ada (\(devices[ada].name)) removing Bob failed: \(error)") }
            } else if status != .accepted, roll >= 90 {
                do {
                    try await setBob(present: true, via: ada)
                    log.append("\(step): Ada (\(devices[ada].name)) re-adds Bob, who accepts")
                } catch { log.append("\(step): Ada (\(devices[ada].name)) re-adding Bob, or his accept, failed: \(error)") }
            }
        default:
            break
        }
    }

    /// Bob's participation as the server has it now (nil: not a participant).
    func bobStatus() async throws -> Share.ParticipantAcceptanceStatus? {
        let shareID = Record.ID(recordName: Share.zoneWideShareRecordName, zoneID: zoneID)
        guard let share = Share(try await server.ada.privateDatabase.record(for: shareID)) else { throw TestFailure("no share") }
        return share.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName }?.acceptanceStatus
    }

    /// Ada's device changes the share from its store (persistUpdatedShare); when Bob is invited,
    /// his device accepts through its store.
    func setBob(present: Bool, via ada: Int) async throws {
        let store = devices[ada].store
        guard var share = try store.fetchShares(in: .private).first(where: { $0.recordID.zoneID == zoneID }) else {
            throw TestFailure("\(devices[ada].name) holds no share")
        }
        let bob = share.participants.first { $0.userIdentity.userRecordID?.recordName == server.bobRecordName }
        if present {
            if bob == nil { share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite)) }
        } else if let bob {
            share.removeParticipant(bob)
        }
        let saved = try await store.persistUpdatedShare(share)
        guard present else { return }
        guard let url = saved.url else { throw TestFailure("the share has no URL") }
        let bobStore = devices[2].store
        let metadata = try await bobStore.container.shareMetadata(for: url)
        try await bobStore.acceptShareInvitations(from: [metadata])
    }

    /// After the random steps (faults off): Bob is a participant who accepted.
    func ensureBobIsIn() async throws {
        for attempt in 0..<3 {
            if try await bobStatus() == .accepted { return }
            do { try await setBob(present: true, via: attempt % 2) } catch { log.append("end: re-adding Bob failed: \(error)") }
        }
        let direct = try LocalStoreShareHelper(server: server)
        let url = try await direct.setBob(present: true, zoneID: zoneID)
        try await server.bob.accept(try await server.bob.shareMetadata(for: url))
        log.append("end: Bob re-added straight on the server")
    }

    func quiesce() async throws {
        for index in devices.indices {
            devices[index].proxy.update { $0 = FaultProxy.Faults() }
        }
        for _ in 0..<4 {
            for device in devices {
                for _ in 0..<5 {
                    do { try await device.store.sync() } catch { try await Task.sleep(nanoseconds: 200_000_000) }
                    if !device.store.hasUnsentChanges { break }
                }
            }
        }
        try await Task.sleep(nanoseconds: 300_000_000)
        for device in devices { try await device.store.sync() }
    }

    func check() async throws {
        try await poll()
        var serverState: [String: [String: String]] = [:]
        var token: ServerChangeToken?
        repeat {
            let page = try await server.ada.privateDatabase.recordZoneChanges(inZoneWith: zoneID, since: token)
            history.fetched(page.modifications, deletions: [])
            for record in page.modifications where record.recordType == "Note" {
                serverState[record.recordID.recordName] = Self.fields(record)
            }
            token = page.changeToken
            if !page.moreComing { break }
        } while true
        var problems: [String] = []
        for device in devices {
            if device.store.hasUnsentChanges { problems.append("\(device.name) still has unsent changes (b)") }
            var local: [String: [String: String]] = [:]
            let scope: Database.Scope = device.isBob ? .shared : .private
            for record in try device.store.records(matching: Query(recordType: "Note"), in: [scope]) where record.recordID.zoneID.zoneName == zoneID.zoneName {
                local[record.recordID.recordName] = Self.fields(record)
            }
            if local != serverState {
                let names = Set(local.keys).union(serverState.keys).sorted().filter { local[$0] != serverState[$0] }
                problems.append("\(device.name) differs from the server (c) on \(names.map { "\($0): local \(local[$0] ?? [:]) server \(serverState[$0] ?? [:])" })")
            }
        }
        let checks = ConvergenceChecks(history: history, app: app,
                                       events: Dictionary(uniqueKeysWithValues: devices.map { ($0.name, $0.changes.all) }), final: serverState,
                                       zoneName: zoneID.zoneName)
        problems += checks.problems()
        let held = app.writes.filter { history.held($0.name, $0.key, $0.value) }.count
        print("convergence seed \(seed): \(app.writes.count) writes (\(held) seen on the server), \(history.versionCount) versions, "
              + "\(checks.deletedOnServer.count) deleted, \(serverState.count) notes at the end; Bob removed \(log.filter { $0.contains("removes Bob") }.count)×, "
              + "re-added \(log.filter { $0.contains("re-adds Bob") }.count)×; events: \(devices.map { "\($0.name) \($0.changes.all.filter(Self.isReport).count)" })")
        if !problems.isEmpty {
            throw TestFailure(problems.joined(separator: "\n") + "\nlog:\n" + log.joined(separator: "\n"))
        }
    }

    /// An event of K32 (b) (the app is told about a change that was not kept as it was).
    static func isReport(_ change: LocalStore.Change) -> Bool {
        switch change {
        case .conflict, .refused, .deletedWhileEdited, .unsentChangesLost: true
        default: false
        }
    }

    static func fields(_ record: Record) -> [String: String] {
        var fields: [String: String] = [:]
        for key in ["title", "body", "color", "text"] { if let value = record[key] as? String { fields[key] = value } }
        return fields
    }
}

/// Ada's share changes made with the Database API, straight to the server (the fallback at the
/// end of a run when the stores' own sharing calls did not bring Bob back).
private struct LocalStoreShareHelper {
    let server: TestServer

    init(server: TestServer) throws { self.server = server }

    @discardableResult
    func setBob(present: Bool, zoneID: RecordZone.ID) async throws -> URL {
        let database = server.ada.privateDatabase
        let shareID = Record.ID(recordName: Share.zoneWideShareRecordName, zoneID: zoneID)
        for _ in 0..<3 {
            guard var share = Share(try await database.record(for: shareID)) else { throw TestFailure("no share") }
            if present {
                share.addParticipant(Share.Participant(lookupInfo: .init(emailAddress: "bob@example.com"), permission: .readWrite))
            } else if let bob = share.participants.first(where: { $0.userIdentity.userRecordID?.recordName == server.bobRecordName }) {
                share.removeParticipant(bob)
            }
            do {
                let saved = try await database.save(share.record)
                guard let url = Share(saved)?.url else { throw TestFailure("the share has no URL") }
                return url
            } catch let error as TandemError where error.code == .serverRecordChanged {
                continue
            }
        }
        throw TestFailure("the share kept changing")
    }
}
