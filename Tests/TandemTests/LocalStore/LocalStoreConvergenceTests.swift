import Foundation
import Testing
import Tandem

/// Seeded random runs (issue 15): three devices (two of Ada's, one of Bob's, a READ_WRITE
/// participant), each with its own store file and a fault proxy (offline spells, latency, 5 %
/// dropped answers, duplicated requests), random creates, same- and different-field edits,
/// deletes, syncs, relaunches, Bob removed and re-added, and one server SIGKILL. At the end the
/// faults stop, everyone syncs to quiescence, and the invariants of K32 are checked. A failure
/// prints its seed; `TANDEM_SEEDS=N` (make soak) runs N seeds from `TANDEM_SEED_BASE`.
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
        let run = try Run(seed: seed, steps: Self.steps)
        do {
            try await run.run()
        } catch {
            Issue.record("seed \(seed) failed (rerun: TANDEM_SEEDS=1 TANDEM_SEED_BASE=\(seed)): \(error)")
        }
        await run.cleanUp()
    }
}

/// One seeded run.
private final class Run: @unchecked Sendable {
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
    var share: Share?
    var names: [String] = []
    var counter = 0
    var log: [String] = []
    /// Every value written during the run, by record name and key.
    var written: [String: [String: Set<String>]] = [:]

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
        for (index, (token, isBob)) in [(server.adaToken, false), (server.adaToken, false), (server.bobToken, true)].enumerated() {
            let proxy = try FaultProxy(upstreamPort: { [server] in server.port }, seed: seed &* 31 &+ UInt64(index))
            let changes = ChangeLog()
            let url = temporaryStoreURL()
            let store = try LocalStore(container: server.container(token: token, proxy: proxy),
                                       configuration: .init(fileURL: url, automaticallySync: true, sendDelay: 0.05, observer: { changes.add($0) }))
            devices.append(Device(name: "d\(index)", token: token, url: url, proxy: proxy, store: store, changes: changes, isBob: isBob))
        }
        let (noteID, share) = try await shareNotebook(ada: devices[0].store, bob: devices[2].store)
        self.share = share
        zoneID = noteID.zoneID
        names = [noteID.recordName]
        for device in devices { try await device.store.sync() }
        print("convergence seed \(seed): set up in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        for index in devices.indices {
            devices[index].proxy.update { $0.dropRate = 0.05; $0.duplicateRate = 0.03; $0.latency = 0.005 }
        }

        var bobRemoved = false
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
            try await act(step: step, device: d, roll: roll, bobRemoved: &bobRemoved)
            let took = Date().timeIntervalSince(before)
            if ProcessInfo.processInfo.environment["TANDEM_PROXY_DEBUG"] != nil { print("\(Date()) \(log.last ?? "")") }
            if took > 1 { print("convergence seed \(seed) step \(step): \(log.last ?? "") took \(Int(took * 1000)) ms") }
            try await Task.sleep(nanoseconds: UInt64.random(in: 0...30_000_000, using: &random))
        }
        if bobRemoved { try await readdBob() }
        let ran = Date()
        try await quiesce()
        print("convergence seed \(seed): quiesced in \(Int(Date().timeIntervalSince(ran) * 1000)) ms")
        try await check()
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

    func act(step: Int, device d: Int, roll: Int, bobRemoved: inout Bool) async throws {
        let device = devices[d]
        let store = device.store
        let visible = names.filter { (try? store.record(for: id($0, for: device))) != nil }
        switch roll {
        case 0..<35 where !visible.isEmpty:
            let name = visible[Int.random(in: 0..<visible.count, using: &random)]
            let key = ["title", "body", "color"][Int.random(in: 0..<3, using: &random)]
            guard var record = try store.record(for: id(name, for: device)) else { return }
            record[key] = "\(device.name)-\(step)"
            written[name, default: [:]][key, default: []].insert("\(device.name)-\(step)")
            log.append("\(step) \(Date()): \(device.name) edits \(name).\(key)")
            try store.save([record])
        case 35..<55:
            counter += 1
            let name = "n\(seed)-\(counter)"
            var record = Record(recordType: "Note", recordID: id(name, for: device))
            record["title"] = "\(device.name)-\(step)"
            written[name, default: [:]]["title", default: []].insert("\(device.name)-\(step)")
            names.append(name)
            log.append("\(step) \(Date()): \(device.name) creates \(name)")
            try store.save([record])
        case 55..<63 where !visible.isEmpty:
            let name = visible[Int.random(in: 0..<visible.count, using: &random)]
            log.append("\(step) \(Date()): \(device.name) deletes \(name)")
            try store.delete([id(name, for: device)])
        case 63..<75:
            log.append("\(step): \(device.name) syncs")
            try? await store.sync()
        case 75..<83:
            let offline = !device.proxy.current.offline
            log.append("\(step): \(device.name) \(offline ? "goes offline" : "comes online")")
            device.proxy.update { $0.offline = offline }
        case 83..<89:
            log.append("\(step): \(device.name) relaunches")
            await store.close()
            try open(&devices[d])
        case 89..<92 where !bobRemoved:
            log.append("\(step): Ada removes Bob")
            try await removeBob()
            bobRemoved = true
        case 92..<95 where bobRemoved:
            log.append("\(step): Ada re-adds Bob, who accepts")
            try await readdBob()
            bobRemoved = false
        default:
            break
        }
    }

    func removeBob() async throws {
        let direct = try LocalStoreShareHelper(server: server)
        try await direct.setBob(present: false, zoneID: zoneID)
    }

    func readdBob() async throws {
        let direct = try LocalStoreShareHelper(server: server)
        let url = try await direct.setBob(present: true, zoneID: zoneID)
        let metadata = try await server.bob.shareMetadata(for: url)
        try await server.bob.accept(metadata)
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
        var serverState: [String: [String: String]] = [:]
        var serverRecords: [String: Record] = [:]
        var token: ServerChangeToken?
        repeat {
            let page = try await server.ada.privateDatabase.recordZoneChanges(inZoneWith: zoneID, since: token)
            for record in page.modifications where record.recordType == "Note" {
                serverState[record.recordID.recordName] = Self.fields(record)
                serverRecords[record.recordID.recordName] = record
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
            // (d) a deletion the server acknowledged is never undone (record names are not reused).
            for case .sent(saved: _, deleted: let deleted) in device.changes.all {
                for id in deleted where id.zoneID.zoneName == zoneID.zoneName && serverState[id.recordName] != nil {
                    let record = serverRecords[id.recordName]
                    problems.append("\(id.recordName) deleted by \(device.name) came back (d): created \(record?.creationDate.map(String.init(describing:)) ?? "?") by \(record?.creatorUserRecordID?.recordName ?? "?"), modified \(record?.modificationDate.map(String.init(describing:)) ?? "?") by \(record?.lastModifiedUserRecordID?.recordName ?? "?"), fields \(serverState[id.recordName] ?? [:]); Ada is \(server.adaRecordName), Bob \(server.bobRecordName)")
                }
            }
        }
        // (a), (b): a key written during the run ends with one of the values written (an older
        // value coming back is a revert), unless an event named the record as not kept.
        var reported = Set<String>()
        for device in devices {
            for change in device.changes.all {
                switch change {
                case .refused(let record, _), .deletedWhileEdited(let record): reported.insert(record.recordID.recordName)
                case .unsentChangesLost(_, let records, let deletions):
                    reported.formUnion(records.map(\.recordID.recordName))
                    reported.formUnion(deletions.map(\.recordName))
                default: break
                }
            }
        }
        for (name, keys) in written where !reported.contains(name) {
            guard let fields = serverState[name] else { continue }
            for (key, values) in keys where !values.contains(fields[key] ?? "") {
                problems.append("\(name).\(key) is \(fields[key] ?? "nil"), none of the values written \(values.sorted()) (a)")
            }
        }
        if !problems.isEmpty {
            throw TestFailure(problems.joined(separator: "\n") + "\nlog:\n" + log.joined(separator: "\n"))
        }
    }

    static func fields(_ record: Record) -> [String: String] {
        var fields: [String: String] = [:]
        for key in ["title", "body", "color", "text"] { if let value = record[key] as? String { fields[key] = value } }
        return fields
    }
}

/// Ada's share changes made with the Database API, straight to the server.
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
