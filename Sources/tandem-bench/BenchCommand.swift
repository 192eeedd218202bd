import Foundation
import TandemStore

/// `tandem-bench`: measures the figures of DESIGN.md §7, each beside a ceiling measured in the
/// same run, and prints them as a table.
enum BenchCommand {
    /// The issue's targets.
    static let createTarget = 0.40
    static let lookupTarget = 0.60
    static let queryP99Target = 0.005

    static func run(_ arguments: [String]) -> Int32 {
        let options: BenchOptions
        do {
            options = try BenchOptions(arguments)
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            return 64
        }
        if options.help {
            print(BenchOptions.usage)
            return 0
        }
        let report = Report()
        do {
            try measure(options, report: report)
            report.printTable()
            report.say("\nload at the end: \(Machine.loadAverage)")
            return 0
        } catch {
            report.say("\ntandem-bench failed: \(error)")
            if !report.rows.isEmpty { report.printTable() }
            return 1
        }
    }

    private static func measure(_ options: BenchOptions, report: Report) throws {
        report.say("tandem-bench\(options.quick ? " --quick" : "") — figures beside ceilings measured in this run")
        Machine.summary.forEach(report.say)
        report.say("tandem:    \(BenchPaths.tandem)")
        let figures = options.figures
        let ceilings = try Ceilings.measure(for: figures, options: options, report: report)

        // Rows are added as each figure finishes, so a failure later still reports what was measured.
        var memories: [ServerMemory] = []
        if figures.contains(.create) || figures.contains(.lookup) {
            let normal = try RecordFigures.run(synchronous: .normal, creates: figures.contains(.create),
                                               lookups: figures.contains(.lookup), options: options, report: report)
            if let creates = normal.creates { addCreateRow(creates, synchronous: .normal, ceilings: ceilings, report: report) }
            if let lookups = normal.lookups, let hello = ceilings.hello { addLookupRow(lookups, hello: hello, report: report) }
            memories.append(normal.memory)
        }
        if figures.contains(.create) {
            let full = try RecordFigures.run(synchronous: .full, creates: true, lookups: false, options: options, report: report)
            if let creates = full.creates { addCreateRow(creates, synchronous: .full, ceilings: ceilings, report: report) }
            memories.append(full.memory)
        }
        if figures.contains(.query) {
            let query = try QueryFigure.run(options: options, report: report)
            if let floor = ceilings.helloSerial { addQueryRows(query, floor: floor, report: report) }
            memories.append(query.memory)
        }
        for memory in memories {
            report.add("peak RSS, \(memory.label)", value: Format.bytes(memory.peak), ceiling: Format.bytes(memory.idle) + " idle",
                       ratio: String(format: "%.1f×", Double(memory.peak) / Double(max(1, memory.idle))), verdict: .info)
        }
    }

    private static func addLookupRow(_ lookups: Wrk.Result, hello: Wrk.Result, report: Report) {
        let ratio = lookups.requestsPerSecond / hello.requestsPerSecond
        report.add("lookups/s, 1 record, c32", value: Format.rate(lookups.requestsPerSecond),
                   ceiling: Format.rate(hello.requestsPerSecond) + " (a)", ratio: Format.percent(ratio),
                   target: "≥ \(Format.percent(lookupTarget))",
                   verdict: .init(passes: ratio >= lookupTarget, problems: lookups.problems))
    }

    private static func addCreateRow(_ creates: Wrk.Result, synchronous: SQLiteSynchronous, ceilings: Ceilings, report: Report) {
        guard let hello = ceilings.hello, let sqlite = ceilings.sqlite[synchronous] else { return }
        let (ceiling, which) = hello.requestsPerSecond <= sqlite.recordsPerSecond
            ? (hello.requestsPerSecond, "(a)") : (sqlite.recordsPerSecond, "(b)")
        let ratio = creates.requestsPerSecond / ceiling
        let isTargeted = synchronous == .normal
        report.add("creates/s, 1 record, c32, \(synchronous.rawValue)", value: Format.rate(creates.requestsPerSecond),
                   ceiling: "\(Format.rate(ceiling)) \(which)", ratio: Format.percent(ratio),
                   target: isTargeted ? "≥ \(Format.percent(createTarget))" : "—",
                   verdict: isTargeted ? .init(passes: ratio >= createTarget, problems: creates.problems)
                                       : (creates.problems > 0 ? .errors : .info))
    }

    private static func addQueryRows(_ query: QueryFigure.Result, floor: Wrk.Result, report: Report) {
        let zone = query.records >= 1_000_000 ? "\(query.records / 1_000_000)M" : "\(query.records / 1000)k"
        let runs = [("c1", query.serial, true), ("c4", query.concurrent, true),
                    ("c1, limit \(QueryFigure.smallResultsLimit)", query.smallPage, false)]
        for (label, run, targeted) in runs {
            for percentile in [50.0, 99.0] {
                guard let value = run.latency[percentile] else { continue }
                let floorValue = floor.latency[percentile] ?? 0
                let isTargeted = targeted && percentile == 99
                report.add("query p\(Int(percentile)), \(zone) zone, \(label)", value: Format.latency(value),
                           ceiling: Format.latency(floorValue) + " (a, c1)",
                           ratio: floorValue > 0 ? String(format: "%.1f×", value / floorValue) : "—",
                           target: isTargeted ? "< \(Format.latency(queryP99Target))" : "—",
                           verdict: isTargeted ? .init(passes: value < queryP99Target, problems: run.problems)
                                               : (run.problems > 0 ? .errors : .info))
            }
        }
        report.add("queries/s, \(zone) zone, c1 / c4", value: Format.rate(query.serial.requestsPerSecond) + " / "
                   + Format.rate(query.concurrent.requestsPerSecond), verdict: .info)
    }
}
