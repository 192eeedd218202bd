import Foundation
import TandemStore
import TandemSQLite

/// A real `tandem serve --quiet` child process on a free loopback port.
///
/// The server is asked for port 0 and tells which port it bound in its start-up line
/// (`tandem serving on http://127.0.0.1:PORT ...`), which goes to its log file even with
/// `--quiet`; so there is no window in which another program could take the port.
final class ServerProcess {
    let dataDirectory: String
    let synchronous: SQLiteSynchronous
    /// `--store` (a PostgreSQL database's URL): the server's store; nil for SQLite in `dataDirectory`.
    let postgresURL: String?
    private let process = Process()
    private let logPath: String
    private(set) var port = 0
    /// More `serve` options (e.g. group session limits).
    var extraArguments: [String] = []

    var url: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }

    init(dataDirectory: String, synchronous: SQLiteSynchronous) {
        self.dataDirectory = dataDirectory
        self.synchronous = synchronous
        postgresURL = nil
        logPath = NSTemporaryDirectory() + "tandem-bench-server-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
    }

    /// A server on the PostgreSQL database at `postgresURL`, keeping assets in `dataDirectory`.
    init(dataDirectory: String, postgresURL: String) {
        self.dataDirectory = dataDirectory
        self.synchronous = .full
        self.postgresURL = postgresURL
        logPath = NSTemporaryDirectory() + "tandem-bench-server-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).log"
    }

    /// Starts the server and waits (up to 60 s: opening a large file may checkpoint) until it serves.
    func start() throws {
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        guard let logHandle = FileHandle(forWritingAtPath: logPath) else { throw BenchError("cannot write \(logPath)") }
        process.executableURL = URL(fileURLWithPath: BenchPaths.tandem)
        // TANDEM_BENCH_SERVER_ARGS adds `serve` options for experiments, e.g. "--workers 16".
        let extra = ProcessInfo.processInfo.environment["TANDEM_BENCH_SERVER_ARGS"]?.split(separator: " ").map(String.init) ?? []
        let store = postgresURL.map { ["--store", $0] } ?? ["--synchronous", synchronous.rawValue.lowercased()]
        process.arguments = ["serve", "--host", "127.0.0.1", "--port", "0", "--data", dataDirectory]
            + store + ["--quiet"] + extraArguments + extra
        process.standardOutput = logHandle
        process.standardError = logHandle
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(BenchPaths.tandem) (build it with swift build -c release): \(error)")
        }
        try? logHandle.close()
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let port = Self.boundPort(in: logText) {
                self.port = port
                _ = try HTTPProbe.get(url + "/healthz", expect: "ok")
                return
            }
            guard process.isRunning else { break }
            usleep(20_000)
        }
        let log = logText
        stop()
        throw BenchError("tandem serve did not start; its log:\n\(log)")
    }

    /// The server's resident memory: `VmHWM` (peak) and `VmRSS` (now) from /proc, in bytes.
    func memory() -> (peak: Int, current: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func kilobytes(_ key: String) -> Int {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                let number = line.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first
                return (number.flatMap { Int($0) } ?? 0) * 1024
            }
            return 0
        }
        return (kilobytes("VmHWM"), kilobytes("VmRSS"))
    }

    /// CPU seconds the server has used so far.
    func cpuSeconds() -> Double { ProcessCPU.seconds(pid: pid) }

    /// SIGTERM, then waits up to 30 s for the clean shutdown (it checkpoints the WAL); SIGKILL after.
    func stop() {
        defer { try? FileManager.default.removeItem(atPath: logPath) }
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(30)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// What the server printed so far (errors only, with `--quiet`).
    var logText: String {
        (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
    }

    static func boundPort(in log: String) -> Int? {
        guard let range = log.range(of: "tandem serving on http://127.0.0.1:") else { return nil }
        let digits = log[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    deinit { stop() }
}
