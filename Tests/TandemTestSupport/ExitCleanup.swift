public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// What a test process started or created that must not outlive it: child processes
/// (`tandem serve`, the SMTP sink, the OIDC provider) and temporary data directories.
///
/// Shared test servers live in `static let`s and are never deinitialised, so a run used to
/// leave their `tandem-test-*` directories in the temporary folder, and their processes
/// stopped only when they noticed their standard input close. That lifeline fails when
/// another child inherited the pipe's write end (Foundation's `Process` closes, in the child,
/// the descriptors it saw open when it started spawning; a pipe another thread opens meanwhile
/// stays open in the child), and a child holding the test process's standard error keeps
/// `swift test` waiting after the tests have reported.
///
/// At process exit (an `atexit` handler; Swift Testing ends with `exit`) every registered
/// process still running gets SIGTERM, and SIGKILL after `terminationGrace` seconds; then every
/// registered path is removed. A crash skips this: the lifelines remain for that case.
public enum ExitCleanup {
    /// Seconds the registered processes get to stop after SIGTERM, all at once.
    public static let terminationGrace = 10.0

    private struct Registry: ~Copyable {
        var processes: [(process: Process, signal: Int32)] = []
        var paths: [String] = []
    }

    private static let registry = Mutex(Registry())

    private static let installed: Void = {
        atexit { ExitCleanup.run() }
    }()

    /// Stops `process` at exit if it is still running then (call it right after `run()`), with
    /// `signal` first (PostgreSQL's fast shutdown is SIGINT: SIGTERM waits for its clients).
    public static func terminateAtExit(_ process: Process, signal: Int32 = SIGTERM) {
        _ = installed
        registry.withLock { registry in
            registry.processes.removeAll { !$0.process.isRunning }
            registry.processes.append((process, signal))
        }
    }

    /// Removes the file or directory at `path` (recursively) at exit, if it is still there.
    public static func removeAtExit(_ path: String) {
        _ = installed
        registry.withLock { $0.paths.append(path) }
    }

    /// A new, empty directory `NSTemporaryDirectory()/PREFIX-UUID`, removed at exit: for files
    /// that bring siblings (a SQLite database and its `-wal` and `-shm`).
    public static func temporaryDirectory(_ prefix: String) throws -> String {
        let path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        removeAtExit(path)
        return path
    }

    /// What the exit handler does; also callable directly (idempotent: it empties the registry).
    public static func run() {
        let (processes, paths) = registry.withLock { registry in
            defer { registry = Registry() }
            return (registry.processes, registry.paths)
        }
        let stopping = processes.filter(\.process.isRunning)
        for (process, signal) in stopping { kill(process.processIdentifier, signal) }
        let running = stopping.map(\.process)
        if !waitForExit(running, seconds: terminationGrace) {
            for process in running where process.isRunning { kill(process.processIdentifier, SIGKILL) }
            _ = waitForExit(running, seconds: 2)
        }
        for path in paths { try? FileManager.default.removeItem(atPath: path) }
    }

    /// Polls (Foundation reaps the children on its own thread; `waitpid` here would race it).
    private static func waitForExit(_ processes: [Process], seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while processes.contains(where: \.isRunning) {
            if Date() >= deadline { return false }
            usleep(10_000)
        }
        return true
    }
}
