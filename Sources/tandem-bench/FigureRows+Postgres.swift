/// The PostgreSQL rows: creates beside the lower of the hello ceiling (a) and the same inserts
/// through pgbench (e) — the raw libpq insert loop (c) when pgbench is missing — and lookups
/// beside (a) (decisions P45, P71).
///
/// A create that lost the race for its zone's change sequence is answered `TRY_AGAIN_LATER`
/// (decisions P3, P21), so the create rates count only the creates that were stored.
extension FigureRows {
    /// Issue 19's targets for the server on PostgreSQL.
    static let postgresCreateTarget = 0.50
    static let postgresLookupTarget = 0.50

    static func postgres(_ records: RecordFigures.Result, ceilings: Ceilings, report: Report) {
        guard let hello = ceilings.hello else { return }
        if let creates = records.creates, let raw = ceilings.postgres {
            // Issue 19: "the same inserts through pgbench or a raw libpq loop": (e) runs a
            // create's own writes in one transaction each; (c) one INSERT, a reference (P71).
            let (inserts, insertsLabel) = ceilings.pgbenchCreates.map { ($0.transactionsPerSecond, "(e)") } ?? (raw.recordsPerSecond, "(c)")
            let (ceiling, which) = hello.requestsPerSecond <= inserts ? (hello.requestsPerSecond, "(a)") : (inserts, insertsLabel)
            let ratio = stored(creates) / ceiling
            report.add("creates/s stored, 1 record, c32, PostgreSQL", value: Format.rate(stored(creates)),
                       ceiling: "\(Format.rate(ceiling)) \(which)", ratio: Format.percent(ratio),
                       target: "≥ \(Format.percent(postgresCreateTarget))",
                       verdict: .init(passes: ratio >= postgresCreateTarget, problems: creates.problems))
            report.add("creates refused TRY_AGAIN_LATER, c32, PostgreSQL",
                       value: Format.percent(Double(creates.non2xx) / Double(max(1, creates.requests))), verdict: .info)
            if let serial = records.serialCreates {
                report.add("creates/s stored, 1 record, c1, PostgreSQL", value: Format.rate(stored(serial)),
                           ceiling: "\(Format.rate(raw.recordsPerSecond)) (c)", ratio: Format.percent(stored(serial) / raw.recordsPerSecond),
                           verdict: serial.problems > 0 ? .errors : .info)
            }
        }
        if let lookups = records.lookups {
            FigureRows.lookups(lookups, hello: hello, store: "PostgreSQL", target: postgresLookupTarget, report: report)
            if let selects = ceilings.pgbenchSelects {
                // Whether the target is within PostgreSQL's own reach on this machine (P66).
                report.add("  reference: pgbench -S c32 beside (a)", value: Format.rate(selects.transactionsPerSecond),
                           ceiling: Format.rate(hello.requestsPerSecond) + " (a)",
                           ratio: Format.percent(selects.transactionsPerSecond / hello.requestsPerSecond), verdict: .info)
                report.add("  reference: PostgreSQL lookups beside (d)", value: Format.rate(lookups.requestsPerSecond),
                           ceiling: Format.rate(selects.transactionsPerSecond) + " (d)",
                           ratio: Format.percent(lookups.requestsPerSecond / selects.transactionsPerSecond), verdict: .info)
            }
        }
        if let creates = records.creates, let raw = ceilings.postgres, ceilings.pgbenchCreates != nil {
            report.add("  reference: PostgreSQL creates beside (c)", value: Format.rate(stored(creates)),
                       ceiling: Format.rate(raw.recordsPerSecond) + " (c)",
                       ratio: Format.percent(stored(creates) / raw.recordsPerSecond), verdict: .info)
        }
    }

    /// Requests per second that were answered 2xx.
    private static func stored(_ run: Wrk.Result) -> Double {
        run.requestsPerSecond * Double(max(0, run.requests - run.non2xx - run.socketErrors)) / Double(max(1, run.requests))
    }
}
