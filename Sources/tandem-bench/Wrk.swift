import Foundation

/// One wrk run: `wrk -t T -c C -d D --latency -s script URL`, and what it printed.
///
/// ```swift
/// let result = try Wrk.run(url: "http://127.0.0.1:8080", script: script, threads: 2, connections: 32, seconds: 10)
/// print(result.requestsPerSecond, result.latency[99.0] ?? 0)
/// ```
enum Wrk {
    struct Result {
        /// wrk's `Requests/sec:` line.
        var requestsPerSecond: Double
        /// wrk's `N requests in ...` line.
        var requests: Int
        /// `--latency` distribution, percentile (50, 75, 90, 99) → seconds.
        var latency: [Double: Double]
        /// `Non-2xx or 3xx responses:` (0 when wrk printed no such line).
        var non2xx: Int
        /// Sum of wrk's `Socket errors:` counts (connect, read, write, timeout).
        var socketErrors: Int
        /// Responses the script's `response()` found wrong (status, missing text, per-item error).
        var badBodies: Int
        /// The first bad body, cut short.
        var badSample: String?
        /// Everything wrk printed, for the log when something looks wrong.
        var output: String
        /// CPU seconds the server under test used during the run, when measured.
        var serverCPUSeconds: Double?
        /// CPU seconds the server's database backends used during the run, when measured
        /// (PostgreSQL on this machine).
        var databaseCPUSeconds: Double?
        /// CPU seconds wrk itself used (its threads generate and parse every request).
        var loadGeneratorCPUSeconds: Double?

        /// Server CPU time per request, in seconds.
        var cpuPerRequest: Double? {
            guard let serverCPUSeconds, requests > 0 else { return nil }
            return serverCPUSeconds / Double(requests)
        }

        /// The database backends' CPU time per request, in seconds.
        var databaseCPUPerRequest: Double? {
            guard let databaseCPUSeconds, requests > 0 else { return nil }
            return databaseCPUSeconds / Double(requests)
        }

        /// wrk's CPU time per request, in seconds.
        var loadGeneratorCPUPerRequest: Double? {
            guard let loadGeneratorCPUSeconds, requests > 0 else { return nil }
            return loadGeneratorCPUSeconds / Double(requests)
        }

        var problems: Int { non2xx + socketErrors + badBodies }

        /// A one-line account of failures, or nil when there were none.
        var problemSummary: String? {
            guard problems > 0 else { return nil }
            var parts = ["\(non2xx) non-2xx", "\(socketErrors) socket errors", "\(badBodies) bad bodies"]
            if let badSample { parts.append("first bad body: \(badSample)") }
            return parts.joined(separator: ", ")
        }
    }

    static var executable: String? { Shell.which("wrk") }

    /// Runs wrk against `url` with `script` written to a temporary file.
    /// - Throws: `BenchError` when wrk is missing, fails, or prints no `Requests/sec:` line.
    /// `serverCPU` reads the server's CPU seconds, `databaseCPU` its database's; each is read
    /// before and after the run. wrk's own CPU time is always measured.
    static func run(url: String, script: WrkScript, threads: Int, connections: Int, seconds: Int,
                    serverCPU: (() -> Double)? = nil, databaseCPU: (() -> Double)? = nil) throws -> Result {
        guard let wrk = executable else { throw BenchError("wrk is not installed (scripts/bootstrap installs it)") }
        // A warm-up of no seconds (a smoke run) is skipped.
        if seconds == 0 {
            return Result(requestsPerSecond: 0, requests: 0, latency: [:], non2xx: 0, socketErrors: 0, badBodies: 0, output: "")
        }
        let scriptPath = NSTemporaryDirectory() + "tandem-bench-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).lua"
        try script.lua.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: scriptPath) }
        let cpuBefore = serverCPU?()
        let databaseBefore = databaseCPU?()
        let childrenBefore = childrenCPUSeconds()
        let output = try Shell.run(wrk, ["-t\(threads)", "-c\(connections)", "-d\(seconds)s", "--timeout", "10s",
                                         "--latency", "-s", scriptPath, url])
        guard output.status == 0 else {
            throw BenchError("wrk exited with status \(output.status): \(output.stderr)\(output.stdout)")
        }
        // wrk carries on with plain GETs when the script does not load; the script's done()
        // line proves it ran.
        let cpuAfter = serverCPU?()
        let databaseAfter = databaseCPU?()
        let childrenAfter = childrenCPUSeconds()
        guard var result = parse(output.stdout), output.stdout.contains("TANDEM_BAD ") else {
            throw BenchError("wrk did not run the script as expected:\n\(output.stdout)\(output.stderr)")
        }
        if let cpuBefore, let cpuAfter { result.serverCPUSeconds = cpuAfter - cpuBefore }
        if let databaseBefore, let databaseAfter { result.databaseCPUSeconds = databaseAfter - databaseBefore }
        result.loadGeneratorCPUSeconds = childrenAfter - childrenBefore
        return result
    }

    /// CPU seconds of this process's children that have ended and been waited for: wrk's,
    /// once `Shell.run` has waited for it (nothing else the bench starts ends meanwhile).
    private static func childrenCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Reads wrk 4's report (see `wrk --latency`) plus the lines the script's `done()` prints.
    static func parse(_ text: String) -> Result? {
        var rps: Double?
        var result = Result(requestsPerSecond: 0, requests: 0, latency: [:], non2xx: 0, socketErrors: 0,
                            badBodies: 0, badSample: nil, output: text)
        var inDistribution = false
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            if line.hasPrefix("Latency Distribution") {
                inDistribution = true
                continue
            }
            if inDistribution, words.count == 2, words[0].hasSuffix("%"), let percentile = Double(words[0].dropLast()),
               let seconds = duration(words[1]) {
                result.latency[percentile] = seconds
                continue
            }
            inDistribution = false
            if line.hasPrefix("Requests/sec:"), words.count >= 2 {
                rps = Double(words[1])
            } else if line.hasPrefix("Non-2xx or 3xx responses:"), let last = words.last {
                result.non2xx = Int(last) ?? 0
            } else if line.hasPrefix("Socket errors:") {
                // "Socket errors: connect 0, read 0, write 0, timeout 0"
                result.socketErrors = words.compactMap { Int($0.trimmingCharacters(in: CharacterSet(charactersIn: ","))) }
                    .reduce(0, +)
            } else if words.count >= 3, words[1] == "requests", words[2] == "in", let count = Int(words[0]) {
                result.requests = count
            } else if line.hasPrefix("TANDEM_BAD "), words.count >= 2 {
                result.badBodies = Int(words[1]) ?? 0
            } else if line.hasPrefix("TANDEM_SAMPLE ") {
                result.badSample = String(line.dropFirst("TANDEM_SAMPLE ".count))
            }
        }
        guard let rps else { return nil }
        result.requestsPerSecond = rps
        return result
    }

    /// wrk's durations: `812.00us`, `1.23ms`, `2.00s`, `1.00m`.
    static func duration(_ text: String) -> Double? {
        let units: [(String, Double)] = [("us", 1e-6), ("ms", 1e-3), ("s", 1), ("m", 60), ("h", 3600)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)) { return value * scale }
        }
        return nil
    }
}
