import Foundation
import Tandem

/// A real `tandem serve` on a free loopback port with a temporary data directory, a container
/// and two users with tokens (the pattern of TandemServerTests' TestServer, without depending
/// on TandemServer: the SDK's tests drive the built `tandem` binary only).
final class TestServer: @unchecked Sendable {
    static let container = "iCloud.com.example.sdk"
    /// One server for the whole suite; tests use their own zones and record names.
    static let shared: TestServer = {
        do { return try TestServer() } catch { fatalError("cannot start tandem serve: \(error)") }
    }()

    let dataDirectory: String
    let port: Int
    let adaToken: String
    let bobToken: String
    let adaRecordName: String
    let bobRecordName: String
    private let process: Process
    private let lifeline: Pipe

    /// The built `tandem` executable (`swift build --build-tests` builds it beside the tests).
    static var binary: String {
        if let path = ProcessInfo.processInfo.environment["TANDEM_BINARY"] { return path }
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        for configuration in ["debug", "release"] {
            let path = root.appendingPathComponent(".build/\(configuration)/tandem").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return root.appendingPathComponent(".build/debug/tandem").path
    }

    init() throws {
        let data = NSTemporaryDirectory() + "tandem-sdk-test-" + UUID().uuidString
        dataDirectory = data
        try Self.admin(["container", "create", Self.container, "--data", data])
        adaRecordName = try Self.admin(["user", "add", "--email", "ada@example.com", "--name", "Ada Lovelace", "--data", data])
        bobRecordName = try Self.admin(["user", "add", "--email", "bob@example.com", "--name", "Bob Builder", "--data", data])
        adaToken = try Self.admin(["token", "create", "--user", "ada@example.com", "--data", data])
        bobToken = try Self.admin(["token", "create", "--user", "bob@example.com", "--data", data])

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--port", "0", "--data", data, "--stop-on-stdin-eof"]
        // The server stops when this pipe closes, i.e. when the test process ends.
        lifeline = Pipe()
        process.standardInput = lifeline
        let pipe = Pipe()
        process.standardError = pipe
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        self.process = process
        // The first stderr line says "tandem serving on http://127.0.0.1:PORT ...".
        var seen = ""
        var found = 0
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += String(decoding: chunk, as: UTF8.self)
            if let range = seen.range(of: #"serving on http://[0-9.]+:([0-9]+)"#, options: .regularExpression) {
                found = Int(seen[range].split(separator: ":").last!)!
                break
            }
        }
        guard found > 0 else { throw TestFailure("server did not start: \(seen)") }
        port = found
        // Keep draining stderr so the server never blocks on a full pipe.
        pipe.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
    }

    /// Runs an admin command; returns the last line of its standard output.
    @discardableResult
    static func admin(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("tandem \(arguments.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
    }

    var serverURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    func container(token: String, deviceID: String? = nil, notifyOwnChanges: Bool = true) -> Container {
        Container(identifier: Self.container, environment: .development, serverURL: serverURL, credentials: .userToken(token),
                  configuration: Container.Configuration(deviceID: deviceID, notifyOwnChanges: notifyOwnChanges,
                                                         retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: 0.1)))
    }

    var ada: Container { container(token: adaToken) }
    var bob: Container { container(token: bobToken) }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A unique name for a test's zone or records.
func unique(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8))" }

/// Runs `body` with a time limit, failing with `TestFailure` when it runs out.
func withTimeout<T: Sendable>(_ seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask { try await Task.sleep(nanoseconds: UInt64(seconds * 1_000_000_000)); return nil }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TestFailure("timed out after \(seconds) s") }
        return value
    }
}
