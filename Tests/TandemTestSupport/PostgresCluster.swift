public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway PostgreSQL cluster, a real peer for the PostgreSQL store's tests (issue 19):
/// Debian's PostgreSQL server (`scripts/bootstrap --test` installs `postgresql`), `initdb` into
/// a temporary folder, listening on 127.0.0.1 on a free port only, with its Unix socket in that
/// folder, trust authentication for loopback only, and `fsync` on (decision P15); up to 400
/// connections, for the server suites run against it (every test server keeps a pool; P38).
///
/// ```swift
/// let url = try PostgresCluster.shared().createDatabase()   // postgres://postgres@127.0.0.1:PORT/test_…
/// ```
///
/// PostgreSQL refuses to run as root, so under root the cluster runs as `nobody` (setpriv), in a
/// folder that `nobody` owns under /tmp or `TANDEM_PG_ROOT` (the test process's own TMPDIR is
/// private to root).
/// The server is stopped (fast shutdown, SIGINT) and its folder removed at process exit through
/// ``ExitCleanup``. ``shared()`` is one cluster per test process, started on first use; tests
/// that stop or kill the server start a cluster of their own with ``init()``, so that the
/// others' databases stay up.
public final class PostgresCluster: Sendable {
    /// The user every database belongs to (trust authentication: no password).
    public static let user = "postgres"
    /// The uid and gid the cluster runs as under root: `nobody`/`nogroup`.
    static let unprivileged: UInt32 = 65534
    /// Longest wait for the server to accept connections after a start (crash recovery included).
    static let startTimeout = 60.0

    /// The TCP port on 127.0.0.1 (kept across restarts).
    public let port: Int
    /// The folder holding the data directory, the socket and the server's log.
    public let directory: String
    private let binaries: String
    private let server = Mutex<Process?>(nil)
    /// The running server's lifeline (see ``watch(_:)``).
    private let lifeline = Mutex<Lifeline?>(nil)

    private static let sharedCluster = Result { try PostgresCluster() }

    /// Where clusters run under root: `TANDEM_PG_ROOT` when set (`scripts/test-process` makes a
    /// folder a run, and removes it with any server still in it when the run ends, even after
    /// a crash that skipped ``ExitCleanup`` and the lifelines), else /tmp.
    static var root: String {
        let given = ProcessInfo.processInfo.environment["TANDEM_PG_ROOT"] ?? ""
        return given.isEmpty ? "/tmp" : given
    }

    /// The test process's shared cluster, started on first use.
    public static func shared() throws -> PostgresCluster { try sharedCluster.get() }

    /// A new cluster of its own: initdb, then started.
    ///
    /// - Throws: ``TandemProcessError`` when PostgreSQL is not installed, or initdb or the
    ///   server fails (with the end of its log).
    public init() throws {
        binaries = try Self.binaryFolder()
        let asRoot = geteuid() == 0
        if asRoot {
            directory = Self.root + "/tandem-pg-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false,
                                                    attributes: [.posixPermissions: 0o700])
            ExitCleanup.removeAtExit(directory)
            guard chown(directory, Self.unprivileged, Self.unprivileged) == 0 else {
                throw TandemProcessError("chown \(directory) to nobody: errno \(errno)")
            }
        } else {
            directory = try ExitCleanup.temporaryDirectory("tandem-pg")
        }
        try Self.run(binaries + "/initdb", ["-D", directory + "/data", "-U", Self.user, "--auth=trust",
                                            "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions"],
                     in: directory, log: directory + "/initdb.log")
        // Only loopback, only trust: the cluster is reachable from this machine alone.
        try "local all all trust\nhost all all 127.0.0.1/32 trust\n"
            .write(toFile: directory + "/data/pg_hba.conf", atomically: false, encoding: .utf8)
        port = try Self.freePort()
        try start()
    }

    /// `postgres://postgres@127.0.0.1:PORT/DATABASE`.
    public func url(database: String) -> String {
        "postgres://\(Self.user)@127.0.0.1:\(port)/\(database)"
    }

    /// Creates a new, empty database (`test_` and a random suffix unless named) and returns its URL.
    public func createDatabase(_ name: String = "test_" + UUID().uuidString.prefix(8).lowercased()) throws -> String {
        try Self.run(binaries + "/createdb", ["-h", "127.0.0.1", "-p", String(port), "-U", Self.user, name],
                     in: directory, log: directory + "/createdb.log", unprivileged: false)
        return url(database: name)
    }

    /// Starts the server (after ``stop()`` or ``kill9()``) and waits until it accepts connections.
    public func start() throws {
        var arguments = ["-D", directory + "/data", "-p", String(port), "-k", directory,
                         "-c", "listen_addresses=127.0.0.1", "-c", "fsync=on", "-c", "synchronous_commit=on",
                         "-c", "shared_buffers=32MB", "-c", "max_connections=400"]
        arguments += ["-c", "log_min_messages=warning"]
        let process = try Self.process(binaries + "/postgres", arguments, in: directory,
                                       log: directory + "/postgres.log", unprivileged: geteuid() == 0)
        try process.run()
        ExitCleanup.terminateAtExit(process, signal: SIGINT)
        server.withLock { $0 = process }
        let deadline = Date(timeIntervalSinceNow: Self.startTimeout)
        while true {
            let ready = try Self.status(binaries + "/pg_isready", ["-q", "-h", "127.0.0.1", "-p", String(port), "-t", "2"])
            if ready == 0 { return try watch(process) }
            guard process.isRunning, Date() < deadline else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                throw TandemProcessError("PostgreSQL did not start on port \(port): " + logTail())
            }
            usleep(50_000)
        }
    }

    /// Fast shutdown (SIGINT: clients are disconnected, the server checkpoints), waiting until it exited.
    public func stop() throws {
        guard let process = server.withLock({ $0 }) else { return }
        unwatch()
        if process.isRunning { kill(process.processIdentifier, SIGINT) }
        try Self.waitForExit(process, seconds: 60)
    }

    /// ``stop()`` then ``start()``: the same data and port.
    public func restart() throws {
        try stop()
        try start()
    }

    /// SIGKILL to the server and every process it started (its backends), as a machine crash
    /// or the OOM killer would; the next ``start()`` runs crash recovery.
    public func kill9() throws {
        guard let process = server.withLock({ $0 }), process.isRunning else { return }
        let pid = process.processIdentifier
        // Read before the kill: once the postmaster is gone its children belong to init.
        let children = ((try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        unwatch()
        kill(pid, SIGKILL)
        for child in children { kill(child, SIGKILL) }
        try Self.waitForExit(process, seconds: 30)
        // The backends must be gone too, or the next postmaster refuses their shared memory.
        let deadline = Date(timeIntervalSinceNow: 30)
        while children.contains(where: { kill($0, 0) == 0 }) && Date() < deadline { usleep(10_000) }
    }

    /// Whether the server process is running.
    public var isRunning: Bool { server.withLock { $0?.isRunning ?? false } }

    // MARK: Processes

    /// A crash of the test process skips ``ExitCleanup``, and PostgreSQL, unlike the other test
    /// peers, does not read its standard input: a ``Lifeline`` sends the server SIGINT when the
    /// test process dies, then removes the cluster's folder.
    private func watch(_ process: Process) throws {
        let watch = try Lifeline(pid: process.processIdentifier, signal: "INT", name: "postgres-lifeline", removing: directory)
        lifeline.withLock { $0 = watch }
    }

    /// Retires the lifeline before a deliberate stop (it must not signal a later server).
    private func unwatch() {
        lifeline.withLock { current in defer { current = nil }; return current }?.retire()
    }

    private func logTail() -> String {
        let log = (try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8)) ?? "(no log)"
        return String(log.suffix(2000))
    }

    /// Debian's newest PostgreSQL server binaries: `/usr/lib/postgresql/VERSION/bin`.
    private static func binaryFolder() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? [])
            .compactMap(Int.init).sorted()
        for version in versions.reversed() where FileManager.default.isExecutableFile(atPath: "\(root)/\(version)/bin/initdb") {
            return "\(root)/\(version)/bin"
        }
        throw TandemProcessError("no PostgreSQL server in \(root): run scripts/bootstrap --test (installs postgresql)")
    }

    /// A process for `executable`, as `nobody` when `unprivileged` (setpriv execs it: the pid is
    /// the server's own), output to `log`.
    private static func process(_ executable: String, _ arguments: [String], in directory: String, log: String,
                                unprivileged: Bool) throws -> Process {
        let process = Process()
        if unprivileged {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(Self.unprivileged)", "--regid=\(Self.unprivileged)", "--clear-groups", "--", executable] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        if unprivileged { _ = chown(log, Self.unprivileged, Self.unprivileged) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs a command to completion; throws with its log when it fails.
    private static func run(_ executable: String, _ arguments: [String], in directory: String, log: String,
                            unprivileged: Bool = geteuid() == 0) throws {
        let process = try process(executable, arguments, in: directory, log: log, unprivileged: unprivileged)
        try process.run()
        ExitCleanup.terminateAtExit(process)
        let processEnd = process.waitForTermination()
        guard processEnd.status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw TandemProcessError("\(executable) exited \(processEnd.status): \(output.suffix(2000))")
        }
    }

    /// A client command's exit status (output discarded).
    private static func status(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let processEnd = process.waitForTermination()
        return processEnd.status
    }

    /// Polls (Foundation reaps its children on its own thread).
    private static func waitForExit(_ process: Process, seconds: Double) throws {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while process.isRunning {
            guard Date() < deadline else { throw TandemProcessError("PostgreSQL did not exit within \(seconds) s") }
            usleep(10_000)
        }
    }

    /// A port nothing listens on now, found by binding port 0 (PostgreSQL binds it a moment later).
    public static func freePort() throws -> Int {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { throw TandemProcessError("socket: errno \(errno)") }
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, length) == 0 && getsockname(probe, $0, &length) == 0 }
        }
        guard bound else { throw TandemProcessError("bind 127.0.0.1:0: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
