import Foundation
import TandemStoreCopy

/// Issue 19 item 4: `tandem migrate` speed, in process (`StoreCopy.run`, what the command runs).
/// The query zone's data directory (`QueryZone`: `records` records of two fields, with their
/// field index and change rows) is copied to a fresh database on a throwaway PostgreSQL
/// cluster (`BenchPostgres`, fsync on) and back to a fresh directory;
/// each way is timed whole, verification included. Target: 20,000 records/s each way (P43).
enum MigrateFigure {
    static let target = 20_000.0

    static func run(options: BenchOptions, report: Report) throws {
        let records = options.size.pick(full: 100_000, quick: 100_000, smoke: 2_000)
        report.section("tandem migrate: \(Format.count(records)) records SQLite → PostgreSQL → SQLite")
        let zone = try QueryZone.prepare(records: records) { report.say($0) }
        let url = try BenchPostgres.database()
        let files = try BenchPaths.temporaryDirectory("migrate-files")
        let back = try BenchPaths.temporaryDirectory("migrate-back")
        defer { BenchPaths.remove(files); BenchPaths.remove(back) }
        for (label, from, to) in [("SQLite → PostgreSQL", StoreCopy.Endpoint.directory(zone.directory), StoreCopy.Endpoint.postgres(url: url, directory: files)),
                                  ("PostgreSQL → SQLite", .postgres(url: url, directory: files), .directory(back))] {
            var last = ""
            let summary = try StoreCopy.run(from: from, to: to, force: false) { last = $0 }
            report.say("  \(label): \(last)")
            let rate = Double(records) / summary.seconds
            report.add("migrate \(label), \(Format.count(records)) records (\(Format.count(summary.rows)) rows)",
                       value: Format.rate(rate) + " records", target: Format.rate(target),
                       verdict: options.size == .full ? Report.Verdict(passes: rate >= target) : .info)
        }
    }
}
