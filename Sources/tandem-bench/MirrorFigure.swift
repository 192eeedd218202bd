import Dispatch
import Foundation
import Tandem
import TandemCore
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 5's figures: how long a fresh device takes to mirror a private zone of 50,000 records
/// into a `LocalStore` (changes/database, then changes/zone pages into SQLite, one transaction
/// per page), and local query latency on that mirror.
enum MirrorFigure {
    struct Result {
        var records: Int
        var mirrorSeconds: Double
        var lookups: [Double]
        var queries: [Double]
        var fileBytes: Int
        var serverCPU: Double
        var clientCPU: Double
    }

    static func run(options: BenchOptions, report: Report) throws -> Result {
        report.section("mirror: a fresh LocalStore mirroring a private zone, then local queries")
        let directory = try BenchPaths.temporaryDirectory("mirror")
        defer { BenchPaths.remove(directory) }
        let count = options.size.pick(full: 50_000, quick: 10_000, smoke: 2_500)
        let account = try BenchAccount.prepare(in: directory)

        // The zone is made through the server (so the database feed lists it), the records
        // are written behind it through the store, as a long-used account would have them.
        let first = ServerProcess(dataDirectory: directory, synchronous: .normal)
        try first.start()
        let zones = JSONWriter.bytes(["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": "notes"]]]]])
        _ = try BenchHTTP().post(first.url + BenchAccount.databasePath + "/zones/modify", token: account.token, body: zones)
        first.stop()
        try write(records: count, owner: account.userRecordName, directory: directory)

        let server = ServerProcess(dataDirectory: directory, synchronous: .normal)
        try server.start()
        defer { server.stop() }
        let file = directory + "/device.sqlite"
        let serverURL = URL(string: server.url)!
        let pid = server.pid
        let result = try blocking { () async throws -> Result in
            let container = Container(identifier: BenchAccount.container, serverURL: serverURL,
                                      credentials: .userToken(account.token))
            let store = try LocalStore(container: container, configuration: .init(
                fileURL: URL(fileURLWithPath: file), automaticallySync: false, indexes: [.init(recordType: "Note", field: "folder")]))
            let started = Date()
            let (serverBefore, clientBefore) = (ProcessCPU.seconds(pid: pid), ProcessCPU.seconds(pid: getpid()))
            try await store.privateEngine.fetchChanges()
            let seconds = Date().timeIntervalSince(started)
            let serverCPU = ProcessCPU.seconds(pid: pid) - serverBefore
            let clientCPU = ProcessCPU.seconds(pid: getpid()) - clientBefore
            let zoneID = Tandem.RecordZone.ID(zoneName: "notes")
            let mirrored = try store.records(matching: Tandem.Query(recordType: "Note"), in: [.private]).count
            guard mirrored == count else { throw BenchError("mirrored \(mirrored) of \(count) records") }

            // Lookups by ID, and a filtered, sorted, limited query (a list screen).
            var lookups: [Double] = []
            var queries: [Double] = []
            for i in 0..<2_000 {
                let id = Tandem.Record.ID(recordName: "n-\((i * 7_919) % count)", zoneID: zoneID)
                let t0 = DispatchTime.now().uptimeNanoseconds
                guard try store.record(for: id) != nil else { throw BenchError("lookup of \(id) found nothing") }
                lookups.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
            }
            for i in 0..<200 {
                let query = Tandem.Query(recordType: "Note", filters: [.equals("folder", "folder-\(i % 50)")], sort: [.descending("n")])
                let t0 = DispatchTime.now().uptimeNanoseconds
                let page = try store.records(matching: query, in: [.private, .shared], limit: 50)
                queries.append(Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
                guard page.count == 50 else { throw BenchError("the query found \(page.count) records, not 50") }
            }
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
            let wal = (try? FileManager.default.attributesOfItem(atPath: file + "-wal")[.size] as? Int) ?? 0
            return Result(records: mirrored, mirrorSeconds: seconds, lookups: lookups.sorted(), queries: queries.sorted(), fileBytes: size + wal,
                          serverCPU: serverCPU, clientCPU: clientCPU)
        }
        report.say("  mirrored \(Format.count(result.records)) records in \(Format.seconds(result.mirrorSeconds)) "
                   + "(\(Format.rate(Double(result.records) / result.mirrorSeconds))), file \(Format.bytes(result.fileBytes)); "
                   + "CPU: server \(Format.seconds(result.serverCPU)), device (SDK + SQLite) \(Format.seconds(result.clientCPU))")
        return result
    }

    static let mirrorTarget = 10.0

    static func rows(_ result: Result, report: Report) {
        report.add("fresh LocalStore mirror of \(Format.count(result.records)) records", value: Format.seconds(result.mirrorSeconds),
                   target: "< \(Format.seconds(mirrorTarget))", verdict: .init(passes: result.mirrorSeconds < mirrorTarget))
        func percentile(_ values: [Double], _ p: Double) -> Double { values[min(values.count - 1, Int(Double(values.count) * p))] }
        report.add("LocalStore record(for:) p50 / p99", value: Format.latency(percentile(result.lookups, 0.5)) + " / "
                   + Format.latency(percentile(result.lookups, 0.99)), verdict: .info)
        report.add("LocalStore query (equals + sort, limit 50) p50 / p99", value: Format.latency(percentile(result.queries, 0.5)) + " / "
                   + Format.latency(percentile(result.queries, 0.99)), verdict: .info)
    }

    /// Records `n-0` … `n-(count-1)` of type Note in zone `notes`, 10,000 per transaction.
    private static func write(records count: Int, owner: String, directory: String) throws {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let scope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: owner)
        let now = Clock.milliseconds()
        let zone = try store.write { try $0.ensureZone(scope, name: "notes", at: now) }
        var written = 0
        while written < count {
            let start = written
            let end = min(count, start + 10_000)
            try store.write { tx in
                for i in start..<end {
                    let sequence = try tx.nextChangeSequence(zone)
                    let stamp = TandemCore.Record.Stamp(timestamp: now + Int64(i), userRecordName: owner)
                    let record = TandemCore.Record(
                        recordName: "n-\(i)", recordType: "Note", recordChangeTag: "\(sequence)",
                        fields: ["n": .int64(Int64(i)), "folder": .string("folder-\(i % 50)"),
                                 "text": .string("Note number \(i): a line or two of text, as a notes app keeps them.")],
                        zoneID: zone.zoneID, created: stamp, modified: stamp)
                    try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
                }
            }
            written = end
        }
    }

    /// Runs async SDK code from the synchronous bench.
    private static func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            do { box.value = .success(try await body()) } catch { box.value = .failure(error) }
            done.signal()
        }
        done.wait()
        return try box.value!.get()
    }
}

private final class ResultBox<T: Sendable>: @unchecked Sendable {
    var value: Result<T, any Error>?
}
