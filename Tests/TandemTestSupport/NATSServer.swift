public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A throwaway NATS server, the real peer for the bus between nodes (issue 20; decisions N11):
/// Debian's `nats-server` (`scripts/bootstrap --test` installs it), listening on 127.0.0.1 on a
/// free port only, with no persistence (plain NATS: what the bus uses), its log in a temporary
/// folder.
///
/// ```swift
/// let nats = try NATSServer()           // started
/// … "--bus", nats.url …                 // nats://127.0.0.1:PORT
/// try nats.stop(); try nats.start()     // the same port again
/// ```
///
/// Stopped at process exit through ``ExitCleanup``, and by a ``Lifeline`` if the test process
/// crashes.
public final class NATSServer: Sendable {
    /// The TCP port on 127.0.0.1 (kept across restarts).
    public let port: Int
    /// The folder holding the server's log.
    public let directory: String
    private let binary: String
    private let arguments: [String]
    private let server = Mutex<(process: Process, lifeline: Lifeline)?>(nil)
    /// Longest wait for the server to accept connections after a start.
    static let startTimeout = 30.0

    /// `nats://127.0.0.1:PORT`.
    public var url: String { "nats://127.0.0.1:\(port)" }

    /// The running server's process id (the bench reads its CPU time from /proc), nil when stopped.
    public var processIdentifier: Int32? { server.withLock { $0?.process.processIdentifier } }

    /// A configuration file in the server's folder holding `text` (nats-server's format, e.g.
    /// `max_payload: 65536`), for ``init(arguments:)``'s `["--config", path]`.
    public static func configFile(_ text: String) throws -> String {
        let path = try ExitCleanup.temporaryDirectory("tandem-nats-config") + "/nats.conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A new server of its own, started. `arguments`: more of nats-server's options (a
    /// `--config` file with `max_payload`, `--user`/`--pass`, `--tls --tlscert … --tlskey …`).
    /// - Throws: ``TandemProcessError`` when nats-server is not installed or does not start.
    public init(arguments: [String] = []) throws {
        self.arguments = arguments
        guard let found = ["/usr/sbin/nats-server", "/usr/bin/nats-server"].first(where: FileManager.default.isExecutableFile) else {
            throw TandemProcessError("no nats-server in /usr/sbin or /usr/bin: run scripts/bootstrap --test (installs nats-server)")
        }
        binary = found
        directory = try ExitCleanup.temporaryDirectory("tandem-nats")
        port = try PostgresCluster.freePort()
        try start()
    }

    /// Starts the server (after ``stop()``) and waits until it accepts connections.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        // A server with a `--config` file takes its name from there (`server_name`): a name from
        // the command line is not one nats-server can keep through a `reload()`.
        let name = arguments.contains("--config") ? [] : ["-n", "tandem-test"]
        process.arguments = ["-a", "127.0.0.1", "-p", String(port)] + name + arguments
        let log = directory + "/nats.log"
        if !FileManager.default.fileExists(atPath: log) { _ = FileManager.default.createFile(atPath: log, contents: nil) }
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        output.seekToEndOfFile()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        ExitCleanup.terminateAtExit(process)
        let lifeline = try Lifeline(pid: process.processIdentifier, signal: "TERM", name: "nats-lifeline")
        server.withLock { $0 = (process, lifeline) }
        let deadline = Date(timeIntervalSinceNow: Self.startTimeout)
        while !Self.accepts(port: port) {
            guard process.isRunning, Date() < deadline else {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                throw TandemProcessError("nats-server did not start on port \(port): \(text.suffix(2000))")
            }
            usleep(20_000)
        }
    }

    /// Stops the server (SIGKILL when `abruptly`, else SIGTERM) and waits until it exited.
    public func stop(abruptly: Bool = false) throws {
        guard let (process, lifeline) = server.withLock({ current in defer { current = nil }; return current }) else { return }
        lifeline.retire()
        if process.isRunning { kill(process.processIdentifier, SIGCONT); kill(process.processIdentifier, abruptly ? SIGKILL : SIGTERM) }
        let deadline = Date(timeIntervalSinceNow: 30)
        while process.isRunning {
            guard Date() < deadline else { throw TandemProcessError("nats-server did not exit within 30 s") }
            usleep(10_000)
        }
    }

    /// Freezes the server (SIGSTOP): it keeps its connections but reads and writes nothing, as a
    /// hung host does. ``resume()`` lets it go on.
    public func pause() {
        if let process = server.withLock({ $0?.process }), process.isRunning { kill(process.processIdentifier, SIGSTOP) }
    }

    /// Lets a ``pause()``d server go on (SIGCONT).
    public func resume() {
        if let process = server.withLock({ $0?.process }), process.isRunning { kill(process.processIdentifier, SIGCONT) }
    }

    /// Makes the server read its `--config` file again (SIGHUP; nats-server reloads, among
    /// others, a cluster's `routes`), keeping its connections.
    public func reload() {
        if let process = server.withLock({ $0?.process }), process.isRunning { kill(process.processIdentifier, SIGHUP) }
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard probe >= 0 else { return false }
        defer { close(probe) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(probe, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
