import Foundation
import Synchronization
import Testing
import TandemCore
import TandemTestSupport

/// `tandem serve --store postgres://…` through a crash of PostgreSQL (issue 19 item 5; decisions
/// P14, P39): while the database is down the server answers 503 `TRY_AGAIN_LATER` with
/// `retryAfter`; once it is back the server serves again without being restarted (its pool
/// reconnects), and every create it acknowledged is there. The cluster is the test's own (the
/// shared one stays up for the other suites).
@Suite(.serialized) struct PostgresServerRestartTests {
    /// What the writers saw.
    struct Outcomes {
        var acknowledged: [String] = []
        var refused = 0
        var unexpected: [String] = []
    }

    @Test func serverAnswers503WhileTheDatabaseIsDownAndKeepsEveryAcknowledgedCreate() throws {
        let cluster = try PostgresCluster()
        let url = try cluster.createDatabase()
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-restart")
        try TandemProcess.admin(["container", "create", TestServer.container, "--data", data, "--store", url])
        try TandemProcess.admin(["user", "add", "--email", "ada@example.com", "--data", data, "--store", url])
        let token = try TandemProcess.admin(["token", "create", "--user", "ada@example.com", "--data", data, "--store", url])
        let server = try TestServer(extraArguments: ["--store", url, "--pool-size", "4", "--quiet"], dataDirectory: data)
        let pid = try #require(server.process?.processIdentifier)
        #expect(server.standardError?.value.contains("store: postgres, pool=4") == true, "\(server.standardError?.value ?? "")")

        // Three writers create records until told to stop; each outcome is acknowledged (200 with
        // the record), refused (503 TRY_AGAIN_LATER with retryAfter) or unexpected.
        let outcomes = Mutex(Outcomes())
        let stop = Atomic<Bool>(false)
        let group = DispatchGroup()
        for writer in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                var n = 0
                while !stop.load(ordering: .relaxed) {
                    n += 1
                    let name = "w\(writer)-\(n)"
                    let outcome = Result { try Self.create(name, on: server, token: token) }
                    outcomes.withLock { seen in
                        switch outcome {
                        case .success(nil): seen.acknowledged.append(name)
                        case .success(let problem?) where problem == "refused": seen.refused += 1
                        case .success(let problem?): seen.unexpected.append("\(name): \(problem)")
                        case .failure(let error): seen.unexpected.append("\(name): \(error)")
                        }
                    }
                    if case .success("refused"?) = outcome { Thread.sleep(forTimeInterval: 0.05) }
                }
            }.start()
        }
        defer {
            stop.store(true, ordering: .relaxed)
            group.wait()
        }

        try Self.waitUntil("creates are acknowledged before the crash") { outcomes.withLock { $0.acknowledged.count >= 20 } }
        try cluster.kill9()
        let beforeRestart = outcomes.withLock { $0.acknowledged.count }

        // Down: a request is refused at once, with the CloudKit body and a retry hint.
        let started = ContinuousClock.now
        let down = try server.post("records/modify", Body.modify([Body.operation("create", name: "while-down", fields: ["n": Body.field(1)])]),
                                   token: .some(token))
        #expect(down.status == 503, "\(down.text)")
        #expect(down.json.serverErrorCode == "TRY_AGAIN_LATER", "\(down.text)")
        #expect((down.json["retryAfter"]?.int64Value ?? 0) >= 1, "\(down.text)")
        #expect(down.json["reason"]?.stringValue?.isEmpty == false, "\(down.text)")
        #expect(ContinuousClock.now - started < .seconds(15), "refused promptly, not after a hang")
        try Self.waitUntil("the writers are refused too") { outcomes.withLock { $0.refused >= 3 } }

        // Back: the same server process serves again by itself.
        try cluster.start()
        try Self.waitUntil("creates are acknowledged after the restart") { outcomes.withLock { $0.acknowledged.count >= beforeRestart + 20 } }
        stop.store(true, ordering: .relaxed)
        group.wait()
        #expect(server.process?.processIdentifier == pid && server.process?.isRunning == true, "the server was not restarted")

        let seen = outcomes.withLock { $0 }
        // The server's log lines of the unexpected answers (their request uuids).
        let uuids = seen.unexpected.compactMap { text in
            text.range(of: #"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"#, options: .regularExpression).map { String(text[$0]) }
        }
        let failures = (server.standardError?.value ?? "").split(separator: "\n").filter { line in uuids.contains { line.contains($0) } }.prefix(5)
        #expect(seen.unexpected.isEmpty, "\(seen.unexpected.prefix(5)); server log: \(failures)")
        // Every acknowledged create is stored (looked up in batches: one request each).
        var missing: [String] = []
        for batch in stride(from: 0, to: seen.acknowledged.count, by: 100) {
            let names = Array(seen.acknowledged[batch..<min(batch + 100, seen.acknowledged.count)])
            let response = try server.post("records/lookup", Body.lookup(names), token: .some(token))
            #expect(response.status == 200, "\(response.text)")
            for (index, record) in response.json.records.enumerated() where record["recordChangeTag"] == nil {
                missing.append(names[index])
            }
        }
        #expect(missing.isEmpty, "acknowledged but not stored: \(missing.prefix(10)) of \(seen.acknowledged.count)")
        #expect(!server.standardError!.value.contains("Fatal error"), "\(server.standardError!.value.suffix(2000))")
    }

    /// `/healthz` reads the store (P60): 503 `TRY_AGAIN_LATER` with `retryAfter` while the
    /// database is down, promptly, and 200 again once it is back, with no restart.
    @Test func healthzFollowsTheDatabase() throws {
        let cluster = try PostgresCluster()
        let url = try cluster.createDatabase()
        let data = try ExitCleanup.temporaryDirectory("tandem-pg-healthz")
        let server = try TestServer(extraArguments: ["--store", url, "--pool-size", "2", "--quiet"], dataDirectory: data)
        // A failed request says what the server logged.
        func healthz() throws -> TestServer.Response {
            do { return try server.request("GET", server.baseURL + "/healthz", token: .some(nil)) } catch {
                Thread.sleep(forTimeInterval: 0.5)
                let state = server.process.map { $0.isRunning ? "running" : "exited \($0.terminationStatus) (\($0.terminationReason == .uncaughtSignal ? "signal" : "exit"))" } ?? "none"
                throw TestFailure("\(error); server \(state), log: \(server.standardError?.value.suffix(3000) ?? "")")
            }
        }
        let up = try healthz()
        #expect(up.status == 200 && up.json["store"]?["state"] == "ok" && up.json["bus"]?["state"] == "in-process", "\(up.text)")
        // start() reads the store once more after "serving on" (the first-run hint, printed last):
        // a database stopped before that read stops the server instead.
        try Self.waitUntil("the server has started") { server.standardError?.value.contains("no containers yet") == true }

        try cluster.stop()
        let started = ContinuousClock.now
        let down = try healthz()
        #expect(down.status == 503, "\(down.text)")
        #expect(down.json.serverErrorCode == "TRY_AGAIN_LATER", "\(down.text)")
        #expect((down.json["retryAfter"]?.int64Value ?? 0) >= 1, "\(down.text)")
        #expect(down.json["store"]?["state"] == "unavailable", "\(down.text)")
        #expect(down.json["bus"]?["state"] == "in-process", "\(down.text)")
        #expect(ContinuousClock.now - started < .seconds(10), "answered within the probe's time limit")

        try cluster.start()
        try Self.waitUntil("/healthz is 200 again") { (try? healthz().status) == 200 }
    }

    /// nil when the create was acknowledged; "refused" for 503 `TRY_AGAIN_LATER` with `retryAfter`;
    /// otherwise what came back.
    static func create(_ name: String, on server: TestServer, token: String) throws -> String? {
        let response = try server.post("records/modify", Body.modify([Body.operation("create", name: name, fields: ["n": Body.field(1)])]),
                                       token: .some(token))
        if response.status == 200, response.json.record(0)["recordChangeTag"] != nil { return nil }
        if response.status == 503, response.json.serverErrorCode == "TRY_AGAIN_LATER", response.json["retryAfter"]?.int64Value != nil { return "refused" }
        return "\(response.status) \(response.text.prefix(300))"
    }

    /// Polls `condition` every 50 ms for up to 120 s (crash recovery on a loaded machine).
    static func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: 120)
        while !condition() {
            guard Date() < deadline else { throw TestFailure("timed out waiting: \(what)") }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }
}
