import Foundation
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 3's figures: `records/lookup` by a participant through the shared database against the
/// owner's own lookup of the same records (the access check's cost), and moving a subtree of
/// 10,000 records into a share and out again (one request each, so one SQLite transaction).
enum SharingFigure {
    static let zone = "Shared"
    static let lookupRecords = 100
    static let subtreeRecords = 10_000

    struct Result {
        var owner: Wrk.Result
        var participant: Wrk.Result
        var moveIn: Double
        var moveOut: Double
        var memory: ServerMemory
    }

    static func run(options: BenchOptions, report: Report) throws -> Result {
        report.section("sharing: owner vs participant lookups, subtree moves (synchronous normal)")
        let directory = try BenchPaths.temporaryDirectory("sharing")
        defer { BenchPaths.remove(directory) }
        let owner = try BenchAccount.prepare(in: directory)
        let participant = try participantToken(in: directory)
        let server = ServerProcess(dataDirectory: directory, synchronous: .normal)
        try server.start()
        defer { server.stop() }
        let idle = server.memory().current
        let ownerHeaders = owner.headers
        let participantHeaders = [("Authorization", "Bearer \(participant)"), ("Content-Type", "application/json")]
        let base = server.url + "/database/1/\(BenchAccount.container)/development"

        // The zone, a root with 100 children, and the share, in the requests an app would make.
        try HTTPProbe.post(base + "/private/zones/modify", headers: ownerHeaders,
                           body: #"{"operations":[{"operationType":"create","zone":{"zoneID":{"zoneName":"\#(zone)"}}}]}"#, expect: "zoneID")
        var operations = [#"{"operationType":"create","record":{"recordType":"Note","recordName":"root","fields":{}}}"#]
        operations += (0..<lookupRecords).map { i in
            #"{"operationType":"create","record":{"recordType":"Note","recordName":"lookup-\#(i)","parent":{"recordName":"root"},"#
                + #""fields":{"title":{"value":"Bench note"},"stars":{"value":5}}}}"#
        }
        operations.append(#"{"operationType":"create","record":{"recordType":"cloudkit.share","recordName":"share","#
                          + #""forRecord":{"recordName":"root"},"participants":[{"userIdentity":{"lookupInfo":{"emailAddress":"\#(participantEmail)"}},"#
                          + #""permission":"READ_WRITE"}]}}"#)
        let created = try HTTPProbe.post(base + "/private/records/modify", headers: ownerHeaders,
                                         body: #"{"zoneID":{"zoneName":"\#(zone)"},"operations":[\#(operations.joined(separator: ","))]}"#,
                                         expect: "shortGUID")
        guard let guid = created.body.firstValue(of: "shortGUID") else { throw BenchError("no shortGUID in \(created.body.prefix(300))") }
        try HTTPProbe.post(base + "/public/records/accept", headers: participantHeaders,
                           body: #"{"shortGUIDs":[{"value":"\#(guid)"}]}"#, expect: "ACCEPTED")

        let ownerScript = WrkScript(path: "/database/1/\(BenchAccount.container)/development/private/records/lookup", headers: ownerHeaders,
                                    bodyFormat: #"{"zoneID":{"zoneName":"\#(zone)"},"records":[{"recordName":"lookup-%d"}]}"#,
                                    formatArguments: ["(id * 31 + n) % \(lookupRecords)"], expect: "recordChangeTag")
        let sharedZone = #"{"zoneName":"\#(zone)","ownerRecordName":"\#(owner.userRecordName)"}"#
        let participantScript = WrkScript(path: "/database/1/\(BenchAccount.container)/development/shared/records/lookup",
                                          headers: participantHeaders,
                                          bodyFormat: #"{"zoneID":\#(sharedZone),"records":[{"recordName":"lookup-%d"}]}"#,
                                          formatArguments: ["(id * 31 + n) % \(lookupRecords)"], expect: "recordChangeTag")
        _ = try Wrk.run(url: server.url, script: ownerScript, threads: 2, connections: 32, seconds: options.warmupSeconds)
        _ = try Wrk.run(url: server.url, script: participantScript, threads: 2, connections: 32, seconds: options.warmupSeconds)
        // Alternating runs, so drift in the machine's speed falls on both sides.
        var ownerRuns: [Wrk.Result] = []
        var participantRuns: [Wrk.Result] = []
        for _ in 0..<2 {
            ownerRuns.append(try Wrk.run(url: server.url, script: ownerScript, threads: 2, connections: 32, seconds: options.loadSeconds,
                                         serverCPU: server.cpuSeconds))
            participantRuns.append(try Wrk.run(url: server.url, script: participantScript, threads: 2, connections: 32,
                                               seconds: options.loadSeconds, serverCPU: server.cpuSeconds))
        }
        let ownerResult = Wrk.Result.combined(ownerRuns)
        let participantResult = Wrk.Result.combined(participantRuns)
        report.wrkLine("owner records/lookup (private), -t2 -c32", ownerResult)
        report.wrkLine("participant records/lookup (shared), -t2 -c32", participantResult)

        // 10,000 records under box-0 (record i's parent is box-(i/2): 14 levels), outside the share.
        for start in stride(from: 0, to: subtreeRecords, by: 200) {
            let batch = (start..<min(start + 200, subtreeRecords)).map { i in
                let parent = i == 0 ? "" : #","parent":{"recordName":"box-\#(i / 2)"}"#
                return #"{"operationType":"create","record":{"recordType":"Note","recordName":"box-\#(i)"\#(parent),"fields":{"n":{"value":\#(i)}}}}"#
            }
            try HTTPProbe.post(base + "/private/records/modify", headers: ownerHeaders,
                               body: #"{"zoneID":{"zoneName":"\#(zone)"},"operations":[\#(batch.joined(separator: ","))]}"#, expect: "recordChangeTag")
        }
        let lookupDeepest = #"{"zoneID":\#(sharedZone),"records":[{"recordName":"box-\#(subtreeRecords - 1)"}]}"#
        let moveIn = try timedMove(base: base, headers: ownerHeaders, parent: #"{"recordName":"root"}"#)
        try HTTPProbe.post(base + "/shared/records/lookup", headers: participantHeaders, body: lookupDeepest, expect: "recordChangeTag")
        let moveOut = try timedMove(base: base, headers: ownerHeaders, parent: "null")
        let hidden = try HTTPProbe.postUnchecked(base + "/shared/records/lookup", headers: participantHeaders, body: lookupDeepest)
        guard hidden.body.contains("NOT_FOUND") else { throw BenchError("after moving out, the participant still sees box-\(subtreeRecords - 1)") }
        report.say("  move \(subtreeRecords) records into the share: \(Format.milliseconds(moveIn)); out again: \(Format.milliseconds(moveOut))"
                   + " (one records/modify each, timed around curl)")
        let memory = server.memory()
        return Result(owner: ownerResult, participant: participantResult, moveIn: moveIn, moveOut: moveOut,
                      memory: ServerMemory(label: "sharing server", idle: idle, peak: memory.peak))
    }

    static let participantEmail = "participant@example.com"

    private static func participantToken(in directory: String) throws -> String {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let user = try store.read { try $0.user(recordNameOrEmail: participantEmail) }
            ?? Admin.addUser(email: participantEmail, name: "Pat Participant", store: store)
        return try Admin.createUserToken(for: user.recordName, store: store)
    }

    /// Sets box-0's parent (fetching its change tag first) and returns the request's seconds.
    private static func timedMove(base: String, headers: [(String, String)], parent: String) throws -> Double {
        let current = try HTTPProbe.post(base + "/private/records/lookup", headers: headers,
                                         body: #"{"zoneID":{"zoneName":"\#(zone)"},"records":[{"recordName":"box-0"}]}"#, expect: "recordChangeTag")
        guard let tag = current.body.firstValue(of: "recordChangeTag") else { throw BenchError("box-0 has no change tag") }
        let body = #"{"zoneID":{"zoneName":"\#(zone)"},"operations":[{"operationType":"update","record":{"recordName":"box-0","#
            + #""recordChangeTag":"\#(tag)","parent":\#(parent)}}]}"#
        let start = Date()
        try HTTPProbe.post(base + "/private/records/modify", headers: headers, body: body, expect: "recordChangeTag")
        return Date().timeIntervalSince(start)
    }
}

extension String {
    /// The string value of the first `"key":"value"` in JSON text (setup responses only).
    func firstValue(of key: String) -> String? { ByteSearch.stringValue(Array(utf8), key: key) }
}

extension Wrk.Result {
    /// Several equal-length runs as one: rates averaged, counts and CPU summed.
    static func combined(_ runs: [Wrk.Result]) -> Wrk.Result {
        var result = runs[0]
        result.requestsPerSecond = runs.map(\.requestsPerSecond).reduce(0, +) / Double(runs.count)
        result.requests = runs.map(\.requests).reduce(0, +)
        result.non2xx = runs.map(\.non2xx).reduce(0, +)
        result.socketErrors = runs.map(\.socketErrors).reduce(0, +)
        result.badBodies = runs.map(\.badBodies).reduce(0, +)
        result.badSample = runs.compactMap(\.badSample).first
        let cpu = runs.compactMap(\.serverCPUSeconds)
        result.serverCPUSeconds = cpu.count == runs.count ? cpu.reduce(0, +) : nil
        return result
    }
}
