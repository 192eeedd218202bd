import Foundation

/// Runs helper programs (wrk, curl) to completion and captures what they print.
enum Shell {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `executable` with `arguments`, waits for it, and returns its exit status and output.
    /// - Throws: `BenchError` when the program cannot be started.
    static func run(_ executable: String, _ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchError("cannot start \(executable): \(error)")
        }
        // Read both pipes to the end before waiting, so a chatty program never blocks on a full pipe.
        let errorData = ReadToEnd(err.fileHandleForReading)
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus,
                      stdout: String(decoding: outputData, as: UTF8.self),
                      stderr: String(decoding: errorData.wait(), as: UTF8.self))
    }

    /// The first executable named `name` on PATH, or nil.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// Reads a file handle to its end on a background thread.
final class ReadToEnd: @unchecked Sendable {
    private var data = Data()
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            finished.signal()
        }
    }

    /// The bytes read; blocks until the writer closed its end.
    func wait() -> Data {
        finished.wait()
        return data
    }
}

/// A benchmark that cannot go on, with the reason.
struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
