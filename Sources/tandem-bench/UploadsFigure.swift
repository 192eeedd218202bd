import Foundation
import TandemCore
import TandemSQLite

/// Issue 14's upload-memory figure: the server's peak RSS while 20 clients each POST a
/// maximal asset (50 MiB) at once, and again while 20 anonymous clients POST 50 MiB to
/// unknown upload URLs. The ceiling is what holding the bodies in memory would cost
/// (20 × 50 MiB); the target is the HTTP layer's stated bound on buffered body bytes
/// (`HTTPServerConfiguration.maxBufferedBodyBytes + maxSpooledBodies × (spoolWindow + 64 KiB)`,
/// 162 MiB) above the idle RSS.
enum UploadsFigure {
    static let clients = 20
    static let bound = (128 << 20) + 32 * ((1 << 20) + (64 << 10))

    static func run(options: BenchOptions, report: Report) throws {
        report.section("uploads: peak RSS under \(clients) concurrent maximal uploads")
        let data = try BenchPaths.temporaryDirectory("uploads")
        let scratch = try BenchPaths.temporaryDirectory("upload-file")
        defer { BenchPaths.remove(data); BenchPaths.remove(scratch) }
        // A user of its own for each client: the HTTP layer lets one sender have at most 4
        // large bodies on their way at once (`maxSpooledBodiesPerHolder`), and the others'
        // would be refused 429 (stop 44's review: this figure measured 4 uploads, not 20).
        let uploaders = try (0..<clients).map { try BenchAccount.prepare(in: data, email: "uploader\($0)@example.com") }
        let server = ServerProcess(dataDirectory: data, synchronous: .normal)
        try server.start()
        defer { server.stop() }

        let file = scratch + "/asset.bin"
        var bytes = [UInt8](repeating: 0, count: Limits.assetBytes)
        for index in stride(from: 0, to: bytes.count, by: 4096) { bytes[index] = UInt8(truncatingIfNeeded: index >> 12) }
        FileManager.default.createFile(atPath: file, contents: Data(bytes))
        bytes = []
        let idle = server.memory().current

        let urls = try uploaders.map { uploader -> String in
            let answer = try HTTPProbe.post(server.url + BenchAccount.databasePath + "/assets/upload", headers: uploader.headers,
                                            body: #"{"tokens": [{"recordType": "Photo", "fieldName": "photo"}]}"#, expect: "url")
            let urls = answer.body.components(separatedBy: "\"url\":").dropFirst().compactMap { part -> String? in
                part.drop { $0 == " " || $0 == "\"" }.split(separator: "\"").first.map(String.init)
            }
            guard urls.count == 1 else { throw BenchError("assets/upload gave \(urls.count) URLs: \(answer.body.prefix(300))") }
            return urls[0]
        }

        let started = Date()
        let statuses = try concurrentPosts(urls, file: file)
        let seconds = Date().timeIntervalSince(started)
        let peak = server.memory().peak
        let stored = statuses.filter { $0 == 200 }.count
        report.say("  \(stored)/\(clients) uploads of 50 MiB stored in \(String(format: "%.1f", seconds)) s; idle RSS \(Format.bytes(idle)), peak \(Format.bytes(peak))")
        report.add("peak RSS, \(clients) concurrent 50 MiB uploads", value: Format.bytes(peak),
                   ceiling: Format.bytes(idle + clients * Limits.assetBytes) + " (bodies in memory)",
                   ratio: Format.percent(Double(peak - idle) / Double(clients * Limits.assetBytes)),
                   target: "≤ idle + \(Format.bytes(bound))",
                   verdict: stored < clients ? .errors : Report.Verdict(passes: peak - idle <= bound))

        let anonymous = (0..<clients).map { server.url + "/upload/1/up_unknown\($0)" }
        let refused = try concurrentPosts(anonymous, file: file)
        let after = server.memory().peak
        report.say("  anonymous: \(refused.filter { $0 == 404 }.count)/\(clients) answered 404 before their bodies; peak now \(Format.bytes(after))")
        report.add("peak RSS growth, \(clients) anonymous 50 MiB uploads", value: Format.bytes(max(0, after - peak)),
                   ceiling: Format.bytes(clients * Limits.assetBytes) + " (bodies in memory)",
                   target: "≤ \(Format.bytes(bound))", verdict: Report.Verdict(passes: after - peak <= bound))
    }

    /// POSTs `file` to every URL at once with curl, streamed from disk (`--upload-file`, so the
    /// clients do not hold 20 × 50 MiB themselves); the status of each.
    private static func concurrentPosts(_ urls: [String], file: String) throws -> [Int] {
        guard let curl = Shell.which("curl") else { throw BenchError("curl is not installed (scripts/bootstrap installs it)") }
        let processes = urls.map { url -> (Process, Pipe) in
            let process = Process()
            let out = Pipe()
            process.executableURL = URL(fileURLWithPath: curl)
            process.arguments = ["-s", "-m", "120", "-o", "/dev/null", "-w", "%{http_code}", "-H", "Content-Type: application/octet-stream",
                                 "-X", "POST", "--upload-file", file, url]
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            return (process, out)
        }
        for (process, _) in processes { try process.run() }
        return processes.map { process, out in
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return Int(text) ?? 0
        }
    }
}
