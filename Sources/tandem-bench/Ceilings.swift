import Foundation
import TandemStore
import TandemSQLite

/// The ceilings every figure is divided by, measured in the same run on the same machine.
struct Ceilings {
    /// (a) inline libwebsockets "hello", wrk -t2 -c32: the request rate the HTTP layer allows.
    var hello: Wrk.Result?
    /// (a) at one connection, wrk -t1 -c1: the latency floor for the query figure.
    var helloSerial: Wrk.Result?
    /// (b) raw SQLite single-record transactions, by `synchronous`.
    var sqlite: [SQLiteSynchronous: SQLiteInsertCeiling.Result] = [:]
    /// (c) raw libpq single-row transactions on the bench's PostgreSQL cluster.
    var postgres: PostgresInsertCeiling.Result?
    /// (d) and (e): PostgreSQL alone through pgbench, reference lines only (decisions P66).
    var pgbenchSelects: PgbenchReference.Result?
    var pgbenchCreates: PgbenchReference.Result?

    /// Runs the ceilings that `figures` need.
    static func measure(for figures: Set<BenchOptions.Figure>, options: BenchOptions, report: Report) throws -> Ceilings {
        var ceilings = Ceilings()
        let all = figures.isEmpty
        let needsHello = all || figures.contains(.create) || figures.contains(.lookup) || figures.contains(.postgres)
        let needsSerial = all || figures.contains(.query) || figures.contains(.postgres)
        let needsSQLite = all || figures.contains(.create)
        let needsPostgres = all || figures.contains(.postgres)
        // Figures without a ceiling (`--only uploads,links`) print no empty section.
        guard needsHello || needsSerial || needsSQLite || needsPostgres else { return ceilings }
        report.section("ceilings")
        if needsHello {
            ceilings.hello = try hello(inline: true, threads: 2, connections: 32, options: options)
            report.wrkLine("(a) lws hello, inline, -t2 -c32", ceilings.hello!)
            // Not a ceiling: the same hello through the worker pool, to show what the hand-off costs.
            let pooled = try hello(inline: false, threads: 2, connections: 32, options: options)
            report.wrkLine("    lws hello, worker pool, -t2 -c32", pooled)
        }
        if needsSerial {
            ceilings.helloSerial = try hello(inline: true, threads: 1, connections: 1, options: options)
            report.wrkLine("(a) lws hello, inline, -t1 -c1", ceilings.helloSerial!, latency: true)
        }
        if needsSQLite {
            for level in [SQLiteSynchronous.normal, .full] {
                let result = try SQLiteInsertCeiling.measure(synchronous: level, seconds: options.sqliteSeconds)
                ceilings.sqlite[level] = result
                let label = "(b) raw SQLite, 1 record/txn, \(level.rawValue)"
                report.say("  \(label.padding(toLength: 38, withPad: " ", startingAt: 0)) \(Format.rate(result.recordsPerSecond))  (\(Format.count(result.records)) records "
                           + "in \(Format.seconds(result.seconds)), CPU \(String(format: "%.0f", result.cpuSeconds / Double(result.records) * 1e6)) µs/record)")
            }
        }
        if needsPostgres {
            let result = try PostgresInsertCeiling.measure(url: try BenchPostgres.database(), seconds: options.sqliteSeconds)
            ceilings.postgres = result
            report.say("  \("(c) raw PostgreSQL, 1 row/txn".padding(toLength: 38, withPad: " ", startingAt: 0)) "
                       + "\(Format.rate(result.recordsPerSecond))  (\(Format.count(result.records)) rows in \(Format.seconds(result.seconds)))")
            // What PostgreSQL alone does with a lookup's and a create's work here: (d) a reference (P66), (e) the creates' ceiling (P71).
            if PgbenchReference.executable() != nil {
                let seconds = max(1, options.loadSeconds)
                ceilings.pgbenchSelects = try PgbenchReference.selectOnly(url: try BenchPostgres.database(), seconds: seconds)
                ceilings.pgbenchCreates = try PgbenchReference.createWrites(url: try BenchPostgres.database(), seconds: seconds)
                report.say("  \("(d) pgbench -S, -c32 -j2".padding(toLength: 38, withPad: " ", startingAt: 0)) "
                           + "\(Format.rate(ceilings.pgbenchSelects!.transactionsPerSecond))  (PostgreSQL alone: a lookup's one SELECT; reference)")
                report.say("  \("(e) pgbench, a create's writes, -c32 -j2".padding(toLength: 38, withPad: " ", startingAt: 0)) "
                           + "\(Format.rate(ceilings.pgbenchCreates!.transactionsPerSecond))  (PostgreSQL alone: a create's 5 writes in 1 txn; the creates' ceiling)")
            } else {
                report.say("  (d), (e): no pgbench installed; PostgreSQL's own reference lines left out")
            }
        }
        return ceilings
    }

    private static func hello(inline: Bool, threads: Int, connections: Int, options: BenchOptions) throws -> Wrk.Result {
        let server = HelloServer(inline: inline)
        let url = try server.start()
        defer { server.stop() }
        try HTTPProbe.post(url + "/", headers: [], body: "{}", expect: #""ok""#)
        let script = BenchScripts.hello()
        _ = try Wrk.run(url: url, script: script, threads: threads, connections: connections, seconds: options.warmupSeconds)
        return try Wrk.run(url: url, script: script, threads: threads, connections: connections, seconds: options.loadSeconds,
                           serverCPU: { ProcessCPU.ownProcess })
    }
}
