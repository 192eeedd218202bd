import Foundation
import TandemCore
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 21's comparison: the same three wrk workloads (`-t2 -c32`, the run's load seconds)
/// against `tandem serve --synchronous full` and PocketBase (`PocketBaseServer`) in the same run,
/// each on a fresh data directory holding `records` records of two text fields (`title`,
/// `bucket` = i % `buckets`, indexed / QUERYABLE), every request with a user token:
///
/// - read by id: Tandem `records/lookup` of one record, PocketBase `GET .../records/{id}`;
/// - filtered list of 20: Tandem `records/query` EQUALS on `bucket`, `resultsLimit` 20;
///   PocketBase `GET .../records?filter=bucket='N'&perPage=20&skipTotal=1` (no total count,
///   as Tandem counts none);
/// - single-record create: Tandem `records/modify` of one `Note`, PocketBase `POST .../records`.
///
/// Targets (issue 21): Tandem ≥ 3× PocketBase on creates and reads, ≥ 2× on lists.
enum PocketBaseFigure {
    static let records = 1_000
    static let buckets = 40
    static let pageSize = 20
    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                title  STRING,
                bucket STRING QUERYABLE
            );
        """

    struct Workload {
        var name: String
        var target: Double
        /// The script of a run, given the run's tag (`warm`, `load`: keeps created names unique).
        var tandem: (String) -> WrkScript
        var pocketBase: (String) -> WrkScript
    }

    static func run(options: BenchOptions, report: Report) throws {
        report.section("PocketBase \(PocketBaseServer.version) beside tandem serve, same workloads, -t2 -c32")
        report.say("  durability: Tandem SQLite WAL, synchronous=FULL; PocketBase \(PocketBaseServer.durability)")
        let pbDirectory = try BenchPaths.temporaryDirectory("pocketbase")
        defer { BenchPaths.remove(pbDirectory) }
        let pocketBase = try PocketBaseServer.start(directory: pbDirectory)
        defer { pocketBase.stop() }
        try populate(pocketBase)

        let directory = try BenchPaths.temporaryDirectory("pocketbase-tandem")
        defer { BenchPaths.remove(directory) }
        let account = try prepareTandem(in: directory)
        let server = ServerProcess(dataDirectory: directory, synchronous: .full)
        try server.start()
        defer { server.stop() }
        try populate(server, account: account)

        let path = BenchAccount.databasePath
        let collection = "/api/collections/\(PocketBaseServer.collection)/records"
        let readArgument = "(id * 31 + n) % \(records)"
        let bucketArgument = "(id * 7919 + n * 37) % \(buckets)"
        let workloads = [
            Workload(name: "read by id", target: 3,
                     tandem: { _ in WrkScript(path: path + "/records/lookup", headers: account.headers,
                                       bodyFormat: #"{"records":[{"recordName":"rec-%d"}]}"#, formatArguments: [readArgument],
                                       expect: "recordChangeTag") },
                     pocketBase: { _ in WrkScript(path: collection + "/" + pocketBaseID("%010d"), headers: pocketBase.headers, bodyFormat: "",
                                           formatArguments: [readArgument], expect: #""collectionName":"notes""#, method: "GET") }),
            Workload(name: "filtered list of \(pageSize)", target: 2,
                     tandem: { _ in WrkScript(path: path + "/records/query", headers: account.headers,
                                       bodyFormat: queryBody(bucket: "%d"), formatArguments: [bucketArgument], expect: "recordChangeTag") },
                     pocketBase: { _ in WrkScript(path: collection + "?perPage=\(pageSize)&skipTotal=1&filter=bucket%%3D%%27%d%%27",
                                           headers: pocketBase.headers, bodyFormat: "", formatArguments: [bucketArgument],
                                           expect: #""collectionName":"notes""#, method: "GET") }),
            Workload(name: "single-record create", target: 3,
                     tandem: { tag in WrkScript(path: path + "/records/modify", headers: account.headers,
                                                bodyFormat: createBody(recordName: "\(tag)-%d-%d", bucket: "%d"),
                                                formatArguments: ["id", "n", "n % \(buckets)"], expect: "recordChangeTag") },
                     pocketBase: { _ in WrkScript(path: collection, headers: pocketBase.headers,
                                                  bodyFormat: #"{"title":"Bench note","bucket":"%d"}"#, formatArguments: ["n % \(buckets)"],
                                                  expect: #""collectionName":"notes""#) }),
        ]
        for workload in workloads {
            let ours = try load(url: server.url, script: workload.tandem, cpu: server.cpuSeconds, options: options)
            report.wrkLine("Tandem \(workload.name)", ours, latency: true)
            let theirs = try load(url: pocketBase.url, script: workload.pocketBase, cpu: pocketBase.cpuSeconds, options: options)
            report.wrkLine("PocketBase \(workload.name)", theirs, latency: true)
            let ratio = ours.requestsPerSecond / max(theirs.requestsPerSecond, 1)
            report.say("  \(workload.name): Tandem / PocketBase = \(String(format: "%.2f×", ratio)) (target ≥ \(Int(workload.target))×: "
                       + "\(ratio >= workload.target ? "met" : "missed"))")
            report.add("vs PocketBase: \(workload.name)/s, c32", value: Format.rate(ours.requestsPerSecond),
                       ceiling: Format.rate(theirs.requestsPerSecond) + " (PB)", ratio: String(format: "%.2f×", ratio),
                       target: "≥ \(Int(workload.target))×",
                       verdict: .init(passes: ratio >= workload.target, problems: ours.problems + theirs.problems))
            report.add("vs PocketBase: \(workload.name) p50/p99", value: latencies(ours), ceiling: latencies(theirs) + " (PB)",
                       verdict: .info)
        }
        report.add("vs PocketBase: durability", value: "synchronous=FULL", ceiling: "NORMAL (PB)", verdict: .info)
    }

    /// `pbrec` + 10 digits: PocketBase ids are 15 characters of `[a-z0-9]`.
    static func pocketBaseID(_ digits: String) -> String { "pbrec" + digits }

    static func createBody(recordName: String, bucket: String) -> String {
        #"{"operations":[{"operationType":"create","record":{"recordType":"Note","recordName":"\#(recordName)","#
            + #""fields":{"title":{"value":"Bench note"},"bucket":{"value":"\#(bucket)"}}}}]}"#
    }

    static func queryBody(bucket: String) -> String {
        #"{"resultsLimit":\#(pageSize),"query":{"recordType":"Note","filterBy":[{"comparator":"EQUALS","fieldName":"bucket","#
            + #""fieldValue":{"value":"\#(bucket)"}}]}}"#
    }

    /// A warm-up, then the measured run.
    private static func load(url: String, script: (String) -> WrkScript, cpu: @escaping () -> Double, options: BenchOptions) throws -> Wrk.Result {
        _ = try Wrk.run(url: url, script: script("warm"), threads: 2, connections: 32, seconds: options.warmupSeconds)
        return try Wrk.run(url: url, script: script("load"), threads: 2, connections: 32, seconds: options.loadSeconds, serverCPU: cpu)
    }

    private static func latencies(_ result: Wrk.Result) -> String {
        [50.0, 99.0].map { result.latency[$0].map(Format.latency) ?? "—" }.joined(separator: "/")
    }

    /// The bench account and the `Note` schema (`bucket` QUERYABLE), before the server opens the store.
    private static func prepareTandem(in directory: String) throws -> BenchAccount {
        let store = try SQLiteStore(directory: directory, synchronous: .full, readerCount: 1)
        defer { store.close() }
        let account = try BenchAccount.prepare(store: store)
        _ = try SchemaService(store: store).importSchema(schema, file: "pocketbase-bench.ckdb", container: BenchAccount.container,
                                                         environment: .development)
        return account
    }

    /// `rec-0` ... in `records/modify` requests of 200, then checks one list page is full.
    private static func populate(_ server: ServerProcess, account: BenchAccount) throws {
        let url = server.url + BenchAccount.databasePath
        for first in stride(from: 0, to: records, by: 200) {
            let operations = (first..<min(records, first + 200)).map { i in
                #"{"operationType":"create","record":{"recordType":"Note","recordName":"rec-\#(i)","#
                    + #""fields":{"title":{"value":"Bench note"},"bucket":{"value":"\#(i % buckets)"}}}}"#
            }
            try HTTPProbe.post(url + "/records/modify", headers: account.headers,
                               body: #"{"operations":["# + operations.joined(separator: ",") + "]}", expect: "recordChangeTag")
        }
        try HTTPProbe.post(url + "/records/lookup", headers: account.headers, body: #"{"records":[{"recordName":"rec-7"}]}"#,
                           expect: "recordChangeTag")
        let page = try HTTPProbe.post(url + "/records/query", headers: account.headers, body: queryBody(bucket: "7"),
                                      expect: "recordChangeTag")
        guard page.occurrences(of: "recordChangeTag") == pageSize else {
            throw BenchError("Tandem's list returned \(page.occurrences(of: "recordChangeTag")) records, expected \(pageSize)")
        }
    }

    /// `pbrec0000000000` ... one create each over one keep-alive connection, then checks one list page is full.
    private static func populate(_ server: PocketBaseServer) throws {
        let http = BenchHTTP()
        let url = server.url + "/api/collections/\(PocketBaseServer.collection)/records"
        for i in 0..<records {
            let body = #"{"id":"\#(pocketBaseID(String(format: "%010d", i)))","title":"Bench note","bucket":"\#(i % buckets)"}"#
            let response = try http.post(url, token: server.userToken, body: Array(body.utf8))
            guard response.status == 200 else {
                throw BenchError("PocketBase create answered \(response.status): \(String(decoding: response.body.prefix(300), as: UTF8.self))")
            }
        }
        try HTTPProbe.get(url + "/" + pocketBaseID("0000000007"), headers: server.headers, expect: #""collectionName":"notes""#)
        let page = try HTTPProbe.get(url + "?perPage=\(pageSize)&skipTotal=1&filter=bucket%3D%277%27", headers: server.headers,
                                     expect: #""collectionName":"notes""#)
        guard page.occurrences(of: #""collectionName""#) == pageSize else {
            throw BenchError("PocketBase's list returned \(page.occurrences(of: #""collectionName""#)) records, expected \(pageSize)")
        }
    }
}
