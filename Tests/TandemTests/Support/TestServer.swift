import Foundation
import Tandem
import TandemTestSupport

/// A real `tandem serve` on a loopback port with a temporary data directory, a container and two
/// users with tokens. The SDK's tests drive the built `tandem` binary only (no TandemServer).
final class TestServer: @unchecked Sendable {
    static let container = "iCloud.com.example.sdk"
    /// One server for the suites that do not stop it; tests use their own zones and record names.
    static let shared: TestServer = {
        do { return try TestServer() } catch { fatalError("cannot start tandem serve: \(error)") }
    }()

    let dataDirectory: String
    let adaToken: String
    let bobToken: String
    let adaRecordName: String
    let bobRecordName: String
    private let lock = NSLock()
    private var server: TandemProcess.Server?
    private(set) var port = 0
    private let extraArguments: [String]

    /// `extraArguments` go to every `tandem serve` (e.g. `--change-retention 1`).
    init(extraArguments: [String] = []) throws {
        self.extraArguments = extraArguments
        let data = NSTemporaryDirectory() + "tandem-sdk-test-" + UUID().uuidString
        dataDirectory = data
        // `shared` is never deinitialised: its directory goes when the process ends.
        ExitCleanup.removeAtExit(data)
        try TandemProcess.admin(["container", "create", Self.container, "--data", data])
        adaRecordName = try TandemProcess.admin(["user", "add", "--email", "ada@example.com", "--name", "Ada Lovelace", "--data", data])
        bobRecordName = try TandemProcess.admin(["user", "add", "--email", "bob@example.com", "--name", "Bob Builder", "--data", data])
        adaToken = try TandemProcess.admin(["token", "create", "--user", "ada@example.com", "--data", data])
        bobToken = try TandemProcess.admin(["token", "create", "--user", "bob@example.com", "--data", data])
        try start()
    }

    /// Starts the server: on a free port the first time, on the same port afterwards.
    func start() throws {
        let started = try TandemProcess.serve(dataDirectory: dataDirectory, port: port, extraArguments: extraArguments)
        lock.withLock {
            server = started
            port = started.port
        }
    }

    /// SIGKILL, as a crash or a dropped network would end connections.
    func kill() {
        guard let process = lock.withLock({ server?.process }) else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitForTermination()
        lock.withLock { server = nil }
    }

    deinit {
        if let process = server?.process, process.isRunning { process.terminate(); process.waitForTermination() }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    var serverURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// A container of the user with `token`; through `proxy` when given (its faults apply).
    func container(token: String, deviceID: String? = nil, notifyOwnChanges: Bool = true, proxy: FaultProxy? = nil) -> Container {
        Container(identifier: Self.container, environment: .development, serverURL: proxy?.url ?? serverURL, credentials: .userToken(token),
                  configuration: Container.Configuration(deviceID: deviceID, notifyOwnChanges: notifyOwnChanges,
                                                         retryPolicy: RetryPolicy(maximumAttempts: 3, initialDelay: 0.1),
                                                         streamReconnection: RetryPolicy(initialDelay: 0.1, maximumDelay: 1)))
    }

    /// Adds an account (the server may be running) and returns its user record name and a token.
    func addUser(email: String, name: String) throws -> (recordName: String, token: String) {
        let recordName = try TandemProcess.admin(["user", "add", "--email", email, "--name", name, "--data", dataDirectory])
        return (recordName, try TandemProcess.admin(["token", "create", "--user", email, "--data", dataDirectory]))
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
