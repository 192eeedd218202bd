import Foundation
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Issue 16's sign-in cost: the Argon2id hash time at the server's default parameters (median
/// of several hashes made here, with libargon2 as the server links it), and password sign-ins/s
/// through the real `POST /auth/1/{container}/signin` of a `tandem serve` under wrk. Every
/// sign-in verifies one hash, and the server runs at most 2 at once (A3), so the ceiling is
/// min(2, cores) hashes per hash time. The failed-sign-in limits are set out of the way
/// (`--sign-in-attempts`); only failures count against them and every bench sign-in succeeds,
/// so they would not bind anyway. (Lookups with a web auth token are the `lookup` figure.)
enum AccountsFigure {
    static let email = "signin-bench@example.com"
    static let password = "bench password, long enough"
    /// As many failures as anyone could make in the run: the limits never answer THROTTLED.
    static let limits = ["--sign-in-attempts", "1000000,1000000,1"]
    /// Hashes (and verifications) the server runs at once (`Argon2id`'s gate, A3).
    static let concurrentHashes = 2

    static func run(options: BenchOptions, report: Report) throws {
        let parameters = AccountSettings().passwordHash
        report.section("accounts: Argon2id (\(parameters)) and password sign-ins")

        let count = options.size.pick(full: 21, quick: 11, smoke: 3)
        var times: [Double] = []
        for index in 0..<count {
            let started = DispatchTime.now().uptimeNanoseconds
            guard try AccountSettings.hashPassword("\(password) \(index)", parameters: parameters) != nil else {
                throw BenchError("the server's default password hash parameters '\(parameters)' are not valid")
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9)
        }
        let median = times.sorted()[count / 2]
        report.say("  Argon2id \(parameters) (m KiB, t passes, p lanes): median \(Format.latency(median)) of \(count) hashes "
                   + "(min \(Format.latency(times.min()!)), max \(Format.latency(times.max()!)))")
        report.add("Argon2id hash, \(parameters), median of \(count)", value: Format.latency(median), verdict: .info)

        let directory = try BenchPaths.temporaryDirectory("accounts")
        defer { BenchPaths.remove(directory) }
        // The bench container, and the app's API token of it.
        let apiToken = try {
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
            defer { store.close() }
            _ = try BenchAccount.prepare(store: store)
            return try AccountAdmin.createAPIToken(container: BenchAccount.container, origins: [], callback: nil, store: store)
        }()
        let server = ServerProcess(dataDirectory: directory, synchronous: .normal)
        server.extraArguments = limits
        try server.start()
        defer { server.stop() }
        report.say("  rate limits out of the way: tandem serve \(limits.joined(separator: " ")) (a million failed sign-ins per "
                   + "account and per address in a 1 s window; successful sign-ins, all of the bench's, are never counted)")

        // Sign up through the server (so the hash has its default parameters), confirm as an
        // operator would, and sign in once with consent.
        let auth = server.url + "/auth/1/\(BenchAccount.container)/"
        let query = "?ckAPIToken=\(apiToken)"
        let json = [("Content-Type", "application/json")]
        try HTTPProbe.post(auth + "signup" + query, headers: json,
                           body: #"{"email":"\#(email)","password":"\#(password)"}"#, expect: "CHECK_EMAIL")
        do {
            let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
            defer { store.close() }
            _ = try AccountAdmin.verify(email, store: store)
        }
        let body = #"{"email":"\#(email)","password":"\#(password)","consent":true,"device":"tandem-bench"}"#
        try HTTPProbe.post(auth + "signin" + query, headers: json, body: body, expect: "ckWebAuthToken")

        let script = WrkScript(path: "/auth/1/\(BenchAccount.container)/signin" + query, headers: json, bodyFormat: body,
                               formatArguments: [], expect: "ckWebAuthToken")
        _ = try Wrk.run(url: server.url, script: script, threads: 2, connections: 8, seconds: options.warmupSeconds)
        let run = try Wrk.run(url: server.url, script: script, threads: 2, connections: 8, seconds: options.loadSeconds,
                              serverCPU: server.cpuSeconds)
        report.wrkLine("auth/signin, password, -t2 -c8", run, latency: true)
        let lanes = min(concurrentHashes, ProcessInfo.processInfo.activeProcessorCount)
        let ceiling = Double(lanes) / median
        report.add("password sign-ins/s, c8", value: Format.rate(run.requestsPerSecond),
                   ceiling: "\(Format.rate(ceiling)) (\(lanes) × 1/hash)", ratio: Format.percent(run.requestsPerSecond / ceiling),
                   verdict: run.problems > 0 ? .errors : .info)
    }
}
