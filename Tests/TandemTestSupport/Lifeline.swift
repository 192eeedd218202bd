public import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Stops a test peer that does not read its standard input (PostgreSQL, nats-server) when the
/// test process dies, even by a crash that skips ``ExitCleanup``: a small shell holds the read
/// end of a pipe whose write end only this process holds; when the pipe closes, the shell sends
/// the peer `signal`, waits until it exited, then removes `folder` (if given).
///
/// ``retire()`` before a deliberate stop, so that the shell cannot signal a later process.
public final class Lifeline: Sendable {
    private let state: Mutex<(watchdog: Process, pipe: Pipe)?>

    /// - Parameters: `pid` the peer's process; `signal` a `kill` signal name (`INT`, `TERM`);
    ///   `name` the shell's `$0` (seen in `ps`).
    /// - Throws: when the shell cannot be started.
    public init(pid: Int32, signal: String, name: String, removing folder: String? = nil) throws {
        let watchdog = Process()
        let pipe = Pipe()
        watchdog.executableURL = URL(fileURLWithPath: "/bin/sh")
        let script = #"read _ignored; kill -"$2" "$1" 2>/dev/null; while kill -0 "$1" 2>/dev/null; do sleep 0.1; done; [ -z "$3" ] || rm -rf "$3""#
        watchdog.arguments = ["-c", script, name, String(pid), signal, folder ?? ""]
        watchdog.standardInput = pipe
        watchdog.standardOutput = FileHandle.nullDevice
        watchdog.standardError = FileHandle.nullDevice
        try watchdog.run()
        ExitCleanup.terminateAtExit(watchdog)
        state = Mutex((watchdog, pipe))
    }

    /// Ends the shell without signalling the peer. Idempotent.
    public func retire() {
        guard let (watchdog, pipe) = state.withLock({ current in defer { current = nil }; return current }) else { return }
        if watchdog.isRunning { kill(watchdog.processIdentifier, SIGKILL) }
        try? pipe.fileHandleForWriting.close()
    }
}
