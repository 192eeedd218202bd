import Foundation
import TandemStore
import TandemSQLite

/// `tandem-bench`: measures the figures of DESIGN.md §7, each beside a ceiling measured in the
/// same run, and prints them as a table.
enum BenchCommand {
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
        // Every figure's load runs 32 or more connections on each side, its server a store and a
        // worker pool: under about 1,024 descriptors they failed with errors that did not say
        // so ("Bad file descriptor"; stop 44's review ran it under 150).
        let descriptors = raiseDescriptorLimit()
        guard descriptors >= minimumDescriptors else {
            FileHandle.standardError.write(Data(("tandem-bench needs at least \(minimumDescriptors) open files (ulimit -n); "
                                                 + "this process may have \(descriptors): raise the limit and run it again\n").utf8))
            return 69
        }
        let report = Report()
        do {
            try measure(options, report: report)
            report.printTable()
            if options.size == .smoke {
                report.say("\nsmoke run: tiny sizes, so the results column says only that every figure ran")
            }
            report.say("\nload at the end: \(Machine.loadAverage)")
            // A figure whose load run had failed requests does not count; in a smoke run (CI)
            // it is the failure the smoke run exists to catch (stop 44's review: the uploads
            // figure said ERRORS and the run exited 0).
            let failed = report.rows.filter { $0.verdict == Report.Verdict.errors.text }.map(\.figure)
            guard failed.isEmpty else {
                report.say("tandem-bench: \(failed.count) figure\(failed.count == 1 ? "" : "s") had failed requests: \(failed.joined(separator: "; "))")
                return 1
            }
            return 0
        } catch {
            report.say("\ntandem-bench failed: \(error)")
            if !report.rows.isEmpty { report.printTable() }
            return 1
        }
    }

    static let minimumDescriptors = 1_024

    /// Raises the soft descriptor limit to the hard one; the soft limit after.
    private static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return Int.max }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(min(limit.rlim_cur, rlim_t(Int.max)))
    }

    private static func measure(_ options: BenchOptions, report: Report) throws {
        report.say("tandem-bench\(options.size == .full ? "" : " --\(options.size.rawValue)") — figures beside ceilings measured in this run")
        Machine.summary.forEach(report.say)
        report.say("tandem:    \(BenchPaths.tandem)")
        let figures = options.figures
        let ceilings = try Ceilings.measure(for: figures, options: options, report: report)

        // Rows are added as each figure finishes, so a failure later still reports what was measured.
        var lookups: Wrk.Result?
        var memories: [ServerMemory] = []
        if figures.contains(.create) || figures.contains(.lookup) {
            let normal = try RecordFigures.run(on: .sqlite(.normal), creates: figures.contains(.create),
                                               lookups: figures.contains(.lookup), options: options, report: report)
            if let creates = normal.creates { FigureRows.creates(creates, synchronous: .normal, ceilings: ceilings, report: report) }
            lookups = normal.lookups
            memories.append(normal.memory)
        }
        if figures.contains(.create) {
            let full = try RecordFigures.run(on: .sqlite(.full), creates: true, lookups: false, options: options, report: report)
            if let creates = full.creates { FigureRows.creates(creates, synchronous: .full, ceilings: ceilings, report: report) }
            memories.append(full.memory)
        }
        if let lookups, let hello = ceilings.hello { FigureRows.lookups(lookups, hello: hello, report: report) }
        if figures.contains(.query) {
            let query = try QueryFigure.run(options: options, report: report)
            if let floor = ceilings.helloSerial { FigureRows.queries(query, floor: floor, report: report) }
            memories.append(query.memory)
        }
        if figures.contains(.postgres) {
            let records = try RecordFigures.run(on: .postgres, creates: true, lookups: true, options: options, report: report)
            FigureRows.postgres(records, ceilings: ceilings, report: report)
            memories.append(records.memory)
            let query = try QueryFigure.run(on: .postgres, options: options, report: report)
            if let floor = ceilings.helloSerial { FigureRows.queries(query, floor: floor, store: "PostgreSQL", report: report) }
            memories.append(query.memory)
        }
        if figures.contains(.paging) { DeepPagingFigure.rows(try DeepPagingFigure.run(options: options, report: report), report: report) }
        if figures.contains(.console) { ConsoleDataFigure.rows(try ConsoleDataFigure.run(options: options, report: report), report: report) }
        if figures.contains(.sync) {
            let sync = try SyncFigure.run(options: options, report: report)
            FigureRows.sync(sync, report: report)
            memories.append(sync.memory)
        }
        if figures.contains(.sharing) {
            let sharing = try SharingFigure.run(options: options, report: report)
            FigureRows.sharing(sharing, report: report)
            memories.append(sharing.memory)
        }
        if figures.contains(.mirror) { MirrorFigure.rows(try MirrorFigure.run(options: options, report: report), report: report) }
        memories.forEach { FigureRows.memory($0, report: report) }
        if figures.contains(.links) { try LinksFigure.run(options: options, report: report) }
        if figures.contains(.websocket) { try WebSocketFigure.run(options: options, report: report) }
        if figures.contains(.schema) { try SchemaFigure.run(options: options, report: report) }
        if figures.contains(.highlights) { try HighlightsFigure.run(options: options, report: report) }
        if figures.contains(.sessions) { try SessionsFigure.run(options: options, report: report) }
        if figures.contains(.uploads) { try UploadsFigure.run(options: options, report: report) }
        if figures.contains(.accounts) { try AccountsFigure.run(options: options, report: report) }
        if figures.contains(.pocketbase) { try PocketBaseFigure.run(options: options, report: report) }
        if figures.contains(.migrate) { try MigrateFigure.run(options: options, report: report) }
        if figures.contains(.bus) { try BusFigure.run(options: options, report: report) }
    }
}
