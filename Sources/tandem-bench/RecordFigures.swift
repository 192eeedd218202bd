import TandemStore
import TandemSQLite

/// Figures 1 and 2: `records/modify` creates and `records/lookup` reads against a real
/// `tandem serve` process on a fresh store (a data directory, or a PostgreSQL database).
enum RecordFigures {
    struct Result {
        var store: BenchStore
        var creates: Wrk.Result?
        /// PostgreSQL only: creates from one connection, which never race for the zone's sequence.
        var serialCreates: Wrk.Result?
        var lookups: Wrk.Result?
        var memory: ServerMemory
    }

    static func run(on store: BenchStore, creates: Bool, lookups: Bool, options: BenchOptions,
                    report: Report) throws -> Result {
        let level = store.label
        switch store {
        case .sqlite: report.section("tandem serve --synchronous \(level.lowercased()), fresh data directory")
        case .postgres: report.section("tandem serve --store postgres://…, fresh database")
        }
        let prepared = try store.prepare()
        defer { prepared.cleanup() }
        let server = prepared.server, account = prepared.account
        try server.start()
        defer { server.stop() }
        let idle = server.memory().current
        var result = Result(store: store, memory: ServerMemory(label: "", idle: idle, peak: 0))

        if creates {
            try HTTPProbe.post(server.url + BenchAccount.databasePath + "/records/modify", headers: account.headers,
                               body: BenchScripts.createBody(recordName: "probe-create"), expect: "recordChangeTag")
            _ = try Wrk.run(url: server.url, script: BenchScripts.create(tag: "warm", headers: account.headers),
                            threads: 2, connections: 32, seconds: options.warmupSeconds)
            let run = try Wrk.run(url: server.url, script: BenchScripts.create(tag: "load", headers: account.headers),
                                  threads: 2, connections: 32, seconds: options.loadSeconds, serverCPU: server.cpuSeconds)
            report.wrkLine("records/modify create, -t2 -c32", run)
            result.creates = run
            if case .postgres = store {
                let serial = try Wrk.run(url: server.url, script: BenchScripts.create(tag: "serial", headers: account.headers),
                                         threads: 1, connections: 1, seconds: options.loadSeconds, serverCPU: server.cpuSeconds)
                report.wrkLine("records/modify create, -t1 -c1", serial)
                result.serialCreates = serial
            }
        }
        if lookups {
            try createLookupRecords(server: server, account: account)
            try HTTPProbe.post(server.url + BenchAccount.databasePath + "/records/lookup", headers: account.headers,
                               body: BenchScripts.lookupBody(recordName: "lookup-0"), expect: "recordChangeTag")
            let script = BenchScripts.lookup(headers: account.headers)
            _ = try Wrk.run(url: server.url, script: script, threads: 2, connections: 32, seconds: options.warmupSeconds)
            // After the warm-up the server's pool has its connections open: their backends'
            // CPU is the database's share of a lookup.
            let backends = try prepared.postgresURL.flatMap { try PostgresBackends(url: $0) }
            let run = try Wrk.run(url: server.url, script: script, threads: 2, connections: 32, seconds: options.loadSeconds,
                                  serverCPU: server.cpuSeconds, databaseCPU: backends.map { backends in { backends.cpuSeconds() } })
            report.wrkLine("records/lookup 1 record, -t2 -c32", run)
            result.lookups = run
        }
        // The same with a web auth token from sign-in (issue 16: within 5% of the CLI token), on SQLite.
        if let run = result.lookups, case .sqlite = store {
            try HTTPProbe.post(server.url + BenchAccount.databasePath + "/records/lookup", headers: account.webTokenHeaders,
                               body: BenchScripts.lookupBody(recordName: "lookup-0"), expect: "recordChangeTag")
            let webScript = BenchScripts.lookup(headers: account.webTokenHeaders)
            _ = try Wrk.run(url: server.url, script: webScript, threads: 2, connections: 32, seconds: options.warmupSeconds)
            let web = try Wrk.run(url: server.url, script: webScript, threads: 2, connections: 32, seconds: options.loadSeconds,
                                  serverCPU: server.cpuSeconds)
            report.wrkLine("lookup, web auth token, -t2 -c32", web)
            report.say("  web auth token / bearer token lookups: \(Format.percent(web.requestsPerSecond / max(run.requestsPerSecond, 1)))")
        }
        let memory = server.memory()
        result.memory = ServerMemory(label: "record server (\(level))", idle: idle, peak: memory.peak)
        report.say("  server memory: \(Format.bytes(idle)) after start-up, peak (VmHWM) \(Format.bytes(memory.peak))")
        let log = server.logText.split(separator: "\n").filter { !$0.contains("tandem serving on") }
        if !log.isEmpty { report.say("  server log:\n    " + log.prefix(10).joined(separator: "\n    ")) }
        return result
    }

    /// One `records/modify` creating the records the lookup benchmark reads.
    private static func createLookupRecords(server: ServerProcess, account: BenchAccount) throws {
        let operations = (0..<BenchScripts.lookupRecords).map { i in
            #"{"operationType":"create","record":{"recordType":"Note","recordName":"lookup-\#(i)","#
                + #""fields":{"title":{"value":"Bench note"},"stars":{"value":5}}}}"#
        }
        let body = #"{"operations":["# + operations.joined(separator: ",") + "]}"
        let response = try HTTPProbe.post(server.url + BenchAccount.databasePath + "/records/modify", headers: account.headers,
                                          body: body, expect: "recordChangeTag")
        let saved = response.occurrences(of: "recordChangeTag")
        guard saved == BenchScripts.lookupRecords else {
            throw BenchError("creating the lookup records saved \(saved) of \(BenchScripts.lookupRecords)")
        }
    }
}
