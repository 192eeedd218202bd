public import Foundation

/// The built `tandem` executable, run by end-to-end tests: admin commands and `tandem serve`
/// on a free loopback port. Shared by TandemServerTests and the SDK's TandemTests, which must not
/// depend on TandemServer.
public enum TandemProcess {
    /// `TANDEM_BINARY`, else `.build/debug/tandem` or `.build/release/tandem` (`swift build
    /// --build-tests` builds it beside the tests).
    public static var binary: String {
        if let path = ProcessInfo.processInfo.environment["TANDEM_BINARY"] { return path }
        for configuration in ["debug", "release"] {
            let path = root.appendingPathComponent(".build/\(configuration)/tandem").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return root.appendingPathComponent(".build/debug/tandem").path
    }

    /// The repository's root folder (test peers live under its `.build/` and `Tests/`).
    public static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs an admin command (with `--store` under ``TestStore``'s switch); returns the last line
    /// of its standard output. Throws when it
    /// exits with a non-zero status or is killed by a signal.
    ///
    /// (Admin commands used to be retried once when killed by SIGABRT: under full-suite load,
    /// about once in a thousand runs, `malloc_consolidate(): invalid chunk size`. The cause was
    /// OpenSSL's exit-time cleanup racing a thread's own cleanup; see `LibCrypto`. No retry now,
    /// so that a crash fails the test.)
    @discardableResult
    public static func admin(_ arguments: [String]) throws -> String {
        let (status, killed, output, errors) = try run(arguments)
        if status == 0 && !killed { return lastLine(output) }
        throw TandemProcessError("tandem \(arguments.joined(separator: " ")) \(killed ? "was killed by signal" : "exited") \(status): "
            + String(decoding: errors.suffix(2000), as: UTF8.self))
    }

    private static func lastLine(_ data: Data) -> String {
        String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    }

    private static func run(_ arguments: [String]) throws -> (Int32, Bool, Data, Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = try TestStore.adding(arguments)
        let out = Pipe()
        process.standardOutput = out
        let err = Pipe()
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        let (status, signalled) = process.waitForTermination()
        return (status, signalled, data, errors)
    }

    /// A running `tandem serve`.
    public struct Server {
        public let process: Process
        public let port: Int
        /// The server's standard input: it stops when this closes (when the test process ends;
        /// `ExitCleanup` also stops it then, in case a copy of this pipe leaked elsewhere).
        public let lifeline: Pipe
        /// What the server wrote to standard error (the last MiB of it).
        public let standardError: CapturedOutput
    }

    /// Standard error of a running server, collected as it is drained.
    public final class CapturedOutput: @unchecked Sendable {
        private let lock = NSLock()
        private var text = ""

        public var value: String { lock.withLock { text } }

        public init() {}

        public func append(_ data: Data) {
            lock.withLock {
                text += String(decoding: data, as: UTF8.self)
                if text.utf8.count > 1 << 20 { text = String(text.suffix(text.count / 2)) }
            }
        }
    }

    /// Starts `tandem serve --port PORT --data DIR --stop-on-stdin-eof EXTRA...` (and `--store`
    /// under ``TestStore``'s switch) and waits (30 s at most) until it prints the port it serves
    /// on. Port 0 picks a free one.
    /// `launcher`: a command the server is started through (its first word the executable; the
    /// server's binary and arguments follow it), e.g. `unshare -m sh -c '… && exec "$0" "$@"'`.
    public static func serve(dataDirectory: String, port requestedPort: Int = 0, extraArguments: [String] = [],
                             launcher: [String] = []) throws -> Server {
        let process = Process()
        let arguments = try TestStore.adding(["serve", "--port", String(requestedPort), "--data", dataDirectory, "--stop-on-stdin-eof"]
            + extraArguments)
        if let command = launcher.first {
            process.executableURL = URL(fileURLWithPath: command)
            process.arguments = Array(launcher.dropFirst()) + [binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = arguments
        }
        let lifeline = Pipe()
        process.standardInput = lifeline
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        ExitCleanup.terminateAtExit(process)
        // The first stderr line says "tandem serving on http://127.0.0.1:PORT ...".
        var seen = ""
        var port = 0
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: #"serving on http://[0-9.]+:([0-9]+)"#, options: .regularExpression) {
                port = Int(seen[range].split(separator: ":").last!)!
                break
            }
        }
        guard port > 0 else { throw TandemProcessError("server did not start: \(seen)") }
        // Keep draining stderr so the server never blocks on a full pipe.
        let captured = CapturedOutput()
        captured.append(Data(seen.utf8))
        pipe.fileHandleForReading.readabilityHandler = { handle in captured.append(handle.availableData) }
        return Server(process: process, port: port, lifeline: lifeline, standardError: captured)
    }
}

public struct TandemProcessError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
