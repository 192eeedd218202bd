import Foundation

/// The run's log (printed as it goes) and the closing table: figure, value, ceiling, ratio,
/// target, verdict.
final class Report {
    struct Row {
        var figure: String
        var value: String
        var ceiling: String
        var ratio: String
        var target: String
        var verdict: String
    }

    enum Verdict {
        case pass, miss, info
        /// The load run had failed requests: the figure does not count.
        case errors

        var text: String {
            switch self {
            case .pass: "PASS"
            case .miss: "MISS"
            case .info: "info"
            case .errors: "ERRORS"
            }
        }

        init(passes: Bool, problems: Int = 0) {
            self = problems > 0 ? .errors : (passes ? .pass : .miss)
        }
    }

    private(set) var rows: [Row] = []

    /// Prints a progress or detail line at once.
    func say(_ line: String) {
        // Unbuffered, so progress shows while a long run goes on even when piped to a file.
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    func section(_ title: String) { say("\n== \(title)") }

    /// Prints one wrk run's figures and any failures it had.
    func wrkLine(_ label: String, _ result: Wrk.Result, latency: Bool = false) {
        var line = "  \(label.padding(toLength: 38, withPad: " ", startingAt: 0)) \(Format.rate(result.requestsPerSecond))"
        line += "  (\(Format.count(result.requests)) requests"
        if latency {
            for p in [50.0, 90.0, 99.0] {
                if let seconds = result.latency[p] { line += ", p\(Int(p)) \(Format.latency(seconds))" }
            }
        }
        if let cpu = result.cpuPerRequest { line += String(format: ", server CPU %.0f µs/request", cpu * 1e6) }
        line += ")"
        say(line)
        if let problems = result.problemSummary { say("    !! \(problems)") }
    }

    func add(_ figure: String, value: String, ceiling: String = "—", ratio: String = "—", target: String = "—",
             verdict: Verdict) {
        rows.append(Row(figure: figure, value: value, ceiling: ceiling, ratio: ratio, target: target, verdict: verdict.text))
    }

    func printTable() {
        let header = Row(figure: "figure", value: "value", ceiling: "ceiling", ratio: "ratio", target: "target", verdict: "result")
        let all = [header] + rows
        func width(_ key: KeyPath<Row, String>) -> Int { all.map { $0[keyPath: key].count }.max() ?? 0 }
        let widths = [width(\.figure), width(\.value), width(\.ceiling), width(\.ratio), width(\.target), width(\.verdict)]
        func render(_ row: Row) -> String {
            let cells = [row.figure, row.value, row.ceiling, row.ratio, row.target, row.verdict]
            return zip(cells, widths).enumerated().map { index, pair in
                let (cell, width) = pair
                let pad = String(repeating: " ", count: max(0, width - cell.count))
                return index == 0 ? cell + pad : pad + cell   // names left, numbers right
            }.joined(separator: "  ")
        }
        section("results")
        say(render(header))
        say(String(repeating: "-", count: widths.reduce(0, +) + 2 * (widths.count - 1)))
        for row in rows { say(render(row)) }
    }
}
