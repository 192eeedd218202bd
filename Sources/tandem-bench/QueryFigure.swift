import TandemStore
import TandemSQLite
import TandemStorePostgres
import TandemPostgres

/// Figure 3: `records/query` latency with one EQUALS filter on a zone of 1,000,000 records,
/// against a real `tandem serve` process on the cached populated data directory (SQLite), or on
/// a fresh database of the bench's PostgreSQL cluster populated with the same records in this run.
enum QueryFigure {
    /// Records per page asked for: the maximum (and what a request without `resultsLimit` gets),
    /// so every request encodes a full page.
    static let resultsLimit = 200
    /// A small page, measured as information: separates the cost of finding the matches from
    /// the cost of decoding and encoding 200 records.
    static let smallResultsLimit = 20

    struct Result {
        var records: Int
        var serial: Wrk.Result
        var concurrent: Wrk.Result
        var smallPage: Wrk.Result
        var memory: ServerMemory
    }

    static func run(on store: BenchStore = .sqlite(.normal), options: BenchOptions, report: Report) throws -> Result {
        let count = options.queryZoneRecords
        let account: BenchAccount, server: ServerProcess
        var cleanup: () -> Void = {}
        defer { cleanup() }
        switch store {
        case .sqlite:
            report.section("records/query on a zone of \(Format.count(count)) records")
            let zone = try QueryZone.prepare(records: count) { report.say($0) }
            if let seconds = zone.populationSeconds {
                report.say("  populated \(zone.directory) in \(Format.seconds(seconds)) (kept for later runs)")
            } else {
                report.say("  reusing \(zone.directory)")
            }
            account = try BenchAccount.prepare(in: zone.directory)
            server = ServerProcess(dataDirectory: zone.directory, synchronous: .normal)
        case .postgres:
            report.section("records/query on a zone of \(Format.count(count)) records, tandem serve --store postgres://…")
            let url = try BenchPostgres.database()
            let directory = try BenchPaths.temporaryDirectory("query-postgres")
            cleanup = { BenchPaths.remove(directory) }
            account = try BenchAccount.prepare(postgresURL: url, directory: directory)
            let started = ContinuousClock.now
            let populating = try PostgresStore(url: url, options: .init(directory: directory, poolSize: 1))
            defer { populating.close() }
            try QueryZone.populate(populating, owner: account.userRecordName, records: count,
                                   perTransaction: QueryZone.postgresRecordsPerTransaction) { report.say($0) }
            // What autovacuum does about a minute after a bulk load: without statistics the planner
            // takes the zone for empty and joins field_index row by row (20 s a query at 5,000 records).
            let connection = try PostgresConnection(url: url)
            defer { connection.close() }
            try connection.execute("ANALYZE")
            report.say("  populated a fresh database and ANALYZEd it in \(Format.seconds((ContinuousClock.now - started) / .seconds(1)))")
            server = ServerProcess(dataDirectory: directory, postgresURL: url)
        }
        try server.start()
        defer { server.stop() }
        let idle = server.memory().current

        let probeStart = ContinuousClock.now
        let probe = try HTTPProbe.post(server.url + BenchAccount.databasePath + "/records/query", headers: account.headers,
                                       body: BenchScripts.queryBody(bucket: "7", resultsLimit: resultsLimit),
                                       expect: "recordChangeTag")
        let returned = probe.occurrences(of: "recordChangeTag")
        let expected = min(resultsLimit, count / QueryZone.buckets)
        guard returned == expected else {
            throw BenchError("a sample query returned \(returned) records, expected \(expected)")
        }
        report.say("  each query: bucket = N (matches \(Format.count(count / QueryZone.buckets)) records), "
                   + "resultsLimit \(resultsLimit), response \(Format.count(probe.body.utf8.count)) bytes, "
                   + "the first in \(Format.latency((ContinuousClock.now - probeStart) / .seconds(1)))")

        let script = BenchScripts.query(headers: account.headers, resultsLimit: resultsLimit)
        _ = try Wrk.run(url: server.url, script: script, threads: 1, connections: 1, seconds: options.warmupSeconds)
        let serial = try Wrk.run(url: server.url, script: script, threads: 1, connections: 1, seconds: options.loadSeconds,
                                 serverCPU: server.cpuSeconds)
        report.wrkLine("records/query, -t1 -c1", serial, latency: true)
        let concurrent = try Wrk.run(url: server.url, script: script, threads: 1, connections: 4, seconds: options.loadSeconds,
                                     serverCPU: server.cpuSeconds)
        report.wrkLine("records/query, -t1 -c4", concurrent, latency: true)
        let small = BenchScripts.query(headers: account.headers, resultsLimit: smallResultsLimit)
        let smallPage = try Wrk.run(url: server.url, script: small, threads: 1, connections: 1, seconds: options.loadSeconds,
                                    serverCPU: server.cpuSeconds)
        report.wrkLine("records/query, limit \(smallResultsLimit), -t1 -c1", smallPage, latency: true)

        let memory = server.memory()
        report.say("  server memory: \(Format.bytes(idle)) after start-up, peak (VmHWM) \(Format.bytes(memory.peak))")
        return Result(records: count, serial: serial, concurrent: concurrent, smallPage: smallPage,
                      memory: ServerMemory(label: "query server (\(Format.count(count)) records, \(store.label))", idle: idle,
                                           peak: memory.peak))
    }
}
