import Foundation
import TandemCore
import TandemSchema
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 6's figures, in process: parse + import time of the largest `.ckdb` fixture, and
/// `CONTAINS_ALL_TOKENS` latency through `RecordService.query` (schema checks included) over a
/// zone of 1,000,000 records whose `title` is SEARCHABLE. The ceiling of the full-text figure
/// is an EQUALS on a QUERYABLE field answered from `field_index` in the same run.
///
/// The zone is built once (10,000 `putRecord`s per transaction, under the imported schema)
/// and kept under `.build/bench-data/`, like `QueryZone`.
enum SchemaFigure {
    static let container = "iCloud.com.example.schemabench"
    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Article (
                title  STRING QUERYABLE SEARCHABLE,
                bucket INT64 QUERYABLE
            );
        """
    static let adjectives = ["amber", "brisk", "calm", "dusty", "eager", "faint", "gentle", "hollow", "icy", "jolly", "keen", "lucid", "mellow"]
    static let nouns = ["anchor", "beacon", "canyon", "delta", "ember", "fjord", "glacier", "harbor", "island", "jungle", "kettle", "lagoon",
                        "meadow", "nebula", "orchard", "prairie", "quarry"]
    static let layoutVersion = 1

    static func run(options: BenchOptions, report: Report) throws {
        report.section("schemas: import and full-text queries")
        try importFigure(report: report)
        try searchFigure(records: options.queryZoneRecords, report: report)
    }

    /// The largest fixture, found from the package root (`.build` sits in it).
    static func largestFixture() throws -> (name: String, text: String) {
        let root = URL(fileURLWithPath: BenchPaths.cacheRoot).deletingLastPathComponent().deletingLastPathComponent()
        let directory = root.appendingPathComponent("Tests/TandemSchemaTests/Fixtures")
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".ckdb") }
        let sized = try names.map { ($0, try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent($0).path)[.size] as? Int ?? 0) }
        guard let largest = sized.max(by: { $0.1 < $1.1 }) else { throw BenchError("no fixtures in \(directory.path)") }
        return (largest.0, try String(contentsOf: directory.appendingPathComponent(largest.0), encoding: .utf8))
    }

    static func importFigure(report: Report) throws {
        let fixture = try largestFixture()
        let clock = ContinuousClock()
        let parses = 200
        let parseStart = clock.now
        for _ in 0..<parses { _ = try Schema(parsing: fixture.text, file: fixture.name) }
        let parse = (clock.now - parseStart) / .seconds(1) / Double(parses)
        let directory = try BenchPaths.temporaryDirectory("schema-import")
        defer { BenchPaths.remove(directory) }
        let store = try SQLiteStore(directory: directory, synchronous: .full, readerCount: 1)
        defer { store.close() }
        let imports = 20
        var total = 0.0
        for i in 0..<imports {
            let id = "\(container).import\(i)"
            _ = try Admin.createContainer(id, store: store)
            let start = clock.now
            _ = try SchemaService(store: store).importSchema(fixture.text, file: fixture.name, container: id, environment: .development)
            total += (clock.now - start) / .seconds(1)
        }
        let types = try Schema(parsing: fixture.text).recordTypes.count
        report.say("  \(fixture.name): \(Format.count(fixture.text.utf8.count)) bytes, \(types) record types; parse \(String(format: "%.2f", parse * 1000)) ms, parse + import (synchronous=FULL, empty container) \(String(format: "%.2f", total / Double(imports) * 1000)) ms")
        report.add("schema parse + import (\(fixture.name))", value: String(format: "%.2f ms", total / Double(imports) * 1000), verdict: .info)
    }

    static func searchFigure(records count: Int, report: Report) throws {
        let directory = try prepare(records: count, report: report)
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let service = RecordService(store: store)
        let owner = try store.read { try $0.user(recordNameOrEmail: "bench-schema@example.com") }!.recordName
        let scope = RequestScope(database: DatabaseScope(container: container, environment: .development, database: .private, owner: owner),
                                 user: owner)
        let zone = ZoneID(zoneName: "Articles")
        func time(_ query: Query, limit: Int, runs: Int) throws -> (median: Double, p99: Double, returned: Int) {
            var samples: [Double] = []
            var returned = 0
            let clock = ContinuousClock()
            for _ in 0..<runs {
                let start = clock.now
                returned = try service.query(query, zoneID: zone, zoneWide: false, limit: limit, after: nil, scope: scope).records.count
                samples.append((clock.now - start) / .seconds(1))
            }
            samples.sort()
            return (samples[runs / 2], samples[min(runs - 1, runs * 99 / 100)], returned)
        }
        let both = Query(recordType: "Article", filters: [Filter(comparator: .containsAllTokens, field: .user("title"), value: .string("brisk harbor"))])
        let common = Query(recordType: "Article", filters: [Filter(comparator: .containsAllTokens, field: .user("title"), value: .string("amber"))])
        let equals = Query(recordType: "Article", filters: [Filter(comparator: .equals, field: .user("bucket"), value: .int64(7))])
        _ = try time(both, limit: 200, runs: 5)
        let rare = try time(both, limit: 200, runs: 200)
        let wide = try time(common, limit: 200, runs: 100)
        let ceiling = try time(equals, limit: 200, runs: 200)
        report.say("  CONTAINS_ALL_TOKENS 'brisk harbor' (~\(Format.count(count / (adjectives.count * nouns.count))) matches, \(rare.returned) returned): median \(Format.latency(rare.median)), p99 \(Format.latency(rare.p99))")
        report.say("  CONTAINS_ALL_TOKENS 'amber' (~\(Format.count(count / adjectives.count)) matches, first \(wide.returned)): median \(Format.latency(wide.median)), p99 \(Format.latency(wide.p99))")
        report.say("  ceiling: EQUALS bucket = 7 (\(Format.count(count / 1000)) matches, \(ceiling.returned) returned): median \(Format.latency(ceiling.median))")
        report.add("CONTAINS_ALL_TOKENS, \(Format.count(count)) records (median)", value: Format.latency(rare.median),
                   ceiling: Format.latency(ceiling.median), ratio: String(format: "%.1f×", rare.median / ceiling.median), verdict: .info)
    }

    /// The populated data directory, built on first use.
    static func prepare(records count: Int, report: Report) throws -> String {
        let directory = BenchPaths.cacheRoot + "/schema-zone-layout\(layoutVersion)-\(count)"
        let marker = directory + "/complete"
        if FileManager.default.fileExists(atPath: marker) {
            report.say("  reusing \(directory)")
            return directory
        }
        BenchPaths.remove(directory)
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        _ = try Admin.createContainer(container, store: store)
        let user = try Admin.addUser(email: "bench-schema@example.com", name: "Bench Schema", store: store)
        _ = try SchemaService(store: store).importSchema(schema, file: "bench.ckdb", container: container, environment: .development)
        let scope = DatabaseScope(container: container, environment: .development, database: .private, owner: user.recordName)
        let zone = try store.write { try $0.ensureZone(scope, name: "Articles", at: 0) }
        let clock = ContinuousClock()
        let began = clock.now
        var written = 0
        while written < count {
            let first = written, last = min(count, written + 10_000)
            try store.write { tx in
                for i in first..<last {
                    let sequence = try tx.nextChangeSequence(zone)
                    let stamp = Record.Stamp(timestamp: Int64(i), userRecordName: user.recordName)
                    let title = "\(adjectives[i % adjectives.count]) \(nouns[i % nouns.count]) number \(i)"
                    try tx.putRecord(Record(recordName: "a\(i)", recordType: "Article", recordChangeTag: String(sequence, radix: 36),
                                            fields: ["title": .string(title), "bucket": .int64(Int64(i % 1000))], zoneID: zone.zoneID,
                                            created: stamp, modified: stamp), zone: zone, sequence: sequence, membership: nil)
                }
            }
            written = last
            if written % 100_000 == 0 { report.say("  populated \(Format.count(written)) in \(Format.seconds((clock.now - began) / .seconds(1)))") }
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data())
        report.say("  built \(directory) in \(Format.seconds((clock.now - began) / .seconds(1))) (kept for later runs)")
        return directory
    }
}
