import Foundation
import TandemCore
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 18: the console's data browser shows a page of the 1,000,000-record bench zone
/// (`QueryZone`) in under 200 ms. A real `tandem serve` on the cached zone; the bench user is made
/// a server administrator with a console session (as `tandem admin add` and a sign-in would), and
/// wrk GETs the data page: 50 records of type `Item` with `bucket = 7` (an EQUALS filter through
/// the query builder), and the first 50 of the type with no filter. Measured against
/// `records/query` answering the same filtered query over the API (the service the page calls).
enum ConsoleDataFigure {
    /// Issue 18: "the data browser on the 1M-record bench zone shows a page in under 200 ms".
    static let pageTarget = 0.200
    static let pageSize = 50

    struct Result {
        var records: Int
        var filtered: Wrk.Result
        var unfiltered: Wrk.Result
        var api: Wrk.Result
    }

    static func run(options: BenchOptions, report: Report) throws -> Result {
        let count = options.queryZoneRecords
        report.section("console data browser on a zone of \(Format.count(count)) records")
        let zone = try QueryZone.prepare(records: count) { report.say($0) }
        let account = try BenchAccount.prepare(in: zone.directory)
        let cookie = try session(in: zone.directory, user: account.userRecordName)
        let server = ServerProcess(dataDirectory: zone.directory, synchronous: .normal)
        try server.start()
        defer { server.stop() }

        let base = "/console/containers/\(BenchAccount.container)/data/development?database=private&zone=\(QueryZone.zoneName)"
            + "&type=\(QueryZone.recordType)&limit=\(pageSize)"
        let headers = [("Cookie", "tandem_console=\(cookie)")]
        let filteredPage = WrkScript(path: base + "&field1=bucket&comparator1=EQUALS&valueType1=INT64&value1=7", headers: headers,
                                     bodyFormat: "", formatArguments: [], expect: "id=\"records\"", method: "GET")
        let firstPage = WrkScript(path: base, headers: headers, bodyFormat: "", formatArguments: [], expect: "id=\"records\"", method: "GET")
        _ = try Wrk.run(url: server.url, script: filteredPage, threads: 1, connections: 1, seconds: options.warmupSeconds)
        let filtered = try Wrk.run(url: server.url, script: filteredPage, threads: 1, connections: 1, seconds: options.loadSeconds)
        report.wrkLine("console data page, bucket = N, \(pageSize) records, -t1 -c1", filtered, latency: true)
        let unfiltered = try Wrk.run(url: server.url, script: firstPage, threads: 1, connections: 1, seconds: options.loadSeconds)
        report.wrkLine("console data page, first \(pageSize) records, -t1 -c1", unfiltered, latency: true)
        let api = try Wrk.run(url: server.url, script: BenchScripts.query(headers: account.headers, resultsLimit: pageSize),
                              threads: 1, connections: 1, seconds: options.loadSeconds)
        report.wrkLine("records/query, bucket = N, limit \(pageSize), -t1 -c1", api, latency: true)
        return Result(records: count, filtered: filtered, unfiltered: unfiltered, api: api)
    }

    /// Makes the bench user a server administrator and starts a console session; returns its cookie value.
    private static func session(in directory: String, user: String) throws -> String {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let token = Tokens.random(prefix: "tdc_")
        let now = Clock.milliseconds()
        try store.write {
            try $0.setServerAdmin(user: user, true)
            try $0.addConsoleSession(hash: Tokens.hash(token), user: user, at: now, expiresAt: now + 3_600_000, idleMilliseconds: 3_600_000)
        }
        return token
    }

    static func rows(_ result: Result, report: Report) {
        let zone = result.records >= 1_000_000 ? "\(result.records / 1_000_000)M" : "\(result.records / 1000)k"
        for (label, run) in [("bucket = N", result.filtered), ("first page", result.unfiltered)] {
            for percentile in [50.0, 99.0] {
                guard let value = run.latency[percentile] else { continue }
                let ceiling = result.api.latency[percentile] ?? 0
                report.add("console data page p\(Int(percentile)), \(zone) zone, \(label), \(pageSize) records", value: Format.latency(value),
                           ceiling: Format.latency(ceiling) + " (records/query)",
                           ratio: ceiling > 0 ? String(format: "%.1f×", value / ceiling) : "—",
                           target: percentile == 99 ? "< \(Format.latency(pageTarget))" : "—",
                           verdict: percentile == 99 ? .init(passes: value < pageTarget, problems: run.problems) : (run.problems > 0 ? .errors : .info))
            }
        }
    }
}
