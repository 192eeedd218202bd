import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TandemCore
import TandemTestSupport

/// A real `tandem serve` process on a free loopback port with a temporary data directory,
/// a container, a user and that user's token — what every end-to-end test starts from.
final class TestServer: @unchecked Sendable {
    static let container = "iCloud.com.example.tests"

    let dataDirectory: String
    private(set) var process: Process?
    private(set) var port = 0
    private(set) var token = ""
    private(set) var userRecordName = ""
    private var lifeline: Pipe?
    /// The running server's standard error so far.
    private(set) var standardError: TandemProcess.CapturedOutput?

    /// The built `tandem` executable (`swift build --build-tests` builds it beside the tests).
    static var binary: String { TandemProcess.binary }

    /// The command the server is started through (see `TandemProcess.serve`); none by default.
    private let launcher: [String]

    init(extraArguments: [String] = [], dataDirectory: String? = nil, launcher: (_ dataDirectory: String) -> [String] = { _ in [] }) throws {
        self.dataDirectory = dataDirectory ?? (NSTemporaryDirectory() + "tandem-test-" + UUID().uuidString)
        self.launcher = launcher(self.dataDirectory)
        if dataDirectory == nil {
            // Shared servers are never deinitialised: their directory goes when the process ends.
            ExitCleanup.removeAtExit(self.dataDirectory)
            _ = try Self.admin(["container", "create", Self.container, "--data", self.dataDirectory])
            userRecordName = try Self.admin(["user", "add", "--email", "ada@example.com", "--name", "Ada Lovelace", "--data", self.dataDirectory])
            token = try Self.admin(["token", "create", "--user", "ada@example.com", "--data", self.dataDirectory])
        }
        try start(extraArguments: extraArguments)
    }

    /// A client's view of servers reached at 127.0.0.1:`port` (nginx in front of several nodes:
    /// ``NodeCluster``): the same requests and streams, no process or data of its own.
    init(reaching port: Int) throws {
        dataDirectory = try ExitCleanup.temporaryDirectory("tandem-front")
        launcher = []
        self.port = port
    }

    /// Runs an admin command; returns the last line of its standard output.
    @discardableResult
    static func admin(_ arguments: [String]) throws -> String { try TandemProcess.admin(arguments) }

    /// Starts (or restarts) the server on a free port and waits until it serves. A server
    /// still running is stopped first (SIGTERM), so that two never share the data directory.
    func start(extraArguments: [String] = []) throws {
        if process != nil { stop() }
        let server = try TandemProcess.serve(dataDirectory: dataDirectory, extraArguments: extraArguments, launcher: launcher)
        process = server.process
        lifeline = server.lifeline
        standardError = server.standardError
        port = server.port
    }

    /// Sends SIGKILL (no clean shutdown) and waits for the process to die.
    func kill() {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitForTermination()
        self.process = nil
    }

    /// Sends `number` (SIGSTOP, SIGCONT, ...) to the server process; no wait.
    func signal(_ number: Int32) {
        guard let process else { return }
        Foundation.kill(process.processIdentifier, number)
    }

    /// Sends SIGTERM (unless `signalled`: the caller already sent it, see `signal`) and waits;
    /// returns the exit status.
    @discardableResult
    func stop(signalled: Bool = false) -> Int32 {
        guard let process else { return 0 }
        if !signalled { process.terminate() }
        let status = process.waitForTermination().status
        self.process = nil
        return status
    }

    deinit {
        if let process, process.isRunning { process.terminate(); process.waitForTermination() }
        try? FileManager.default.removeItem(atPath: dataDirectory)
    }

    var baseURL: String { "http://127.0.0.1:\(port)" }

    func databaseURL(_ operation: String, database: String = "private", environment: String = "development",
                     container: String = TestServer.container) -> String {
        "\(baseURL)/database/1/\(container)/\(environment)/\(database)/\(operation)"
    }

    // MARK: HTTP

    struct Response {
        var status: Int
        var body: Data
        var headers: [String: String]
        var json: JSONValue { (try? JSONParser.parse([UInt8](body))) ?? .null }
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    /// A blocking HTTP request with the test user's token unless `token` says otherwise.
    ///
    /// Against PostgreSQL (`TestStore`, decisions P38) a write that lost a serialization race is
    /// answered `TRY_AGAIN_LATER` "the database is busy" (P21). The server's own writers wait for
    /// each other (P48); what is left is a race with an admin command the test runs meanwhile (a
    /// second process writing the same database, as another node would). This client then does
    /// what every CloudKit client does, waits and sends the request again, for up to 10 s (P61;
    /// 60 s before the writer gate, P51).
    func request(_ method: String, _ url: String, body: Data? = nil, token: String?? = .none,
                 headers: [String: String] = [:]) throws -> Response {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let response = try send(method, url, body: body, token: token, headers: headers)
            guard TestStore.isPostgres, Date() < deadline, response.status == 503, response.json.serverErrorCode == "TRY_AGAIN_LATER",
                  response.json["reason"]?.stringValue?.hasPrefix("the database is busy") == true else { return response }
            Thread.sleep(forTimeInterval: Double.random(in: 0.05...0.3))
        }
    }

    private func send(_ method: String, _ url: String, body: Data?, token: String??, headers: [String: String]) throws -> Response {
        if let body, body.count > Self.largestURLSessionBody {
            return try sendThroughCurl(method, url, body: body, token: token, headers: headers)
        }
        var request = URLRequest(url: URL(string: url)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 60
        let bearer: String? = switch token { case .none: self.token; case .some(let t): t }
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if body != nil, headers["Content-Type"] == nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let box = ResultBox()
        let semaphore = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.set(data: data, response: response as? HTTPURLResponse, error: error)
            semaphore.signal()
        }.resume()
        semaphore.wait()
        if let error = box.error { throw error }
        guard let http = box.response else { throw TestFailure("no HTTP response") }
        var headerMap: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headerMap[String(describing: key).lowercased()] = String(describing: value) }
        return Response(status: http.statusCode, body: box.data ?? Data(), headers: headerMap)
    }

    /// POSTs a JSON value to a database operation.
    func post(_ operation: String, _ body: JSONValue, token: String?? = .none, database: String = "private") throws -> Response {
        try request("POST", databaseURL(operation, database: database), body: Data(JSONWriter.bytes(body)), token: token)
    }

    func get(_ operation: String, token: String?? = .none, database: String = "private") throws -> Response {
        try request("GET", databaseURL(operation, database: database), token: token)
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var data: Data?
    private(set) var response: HTTPURLResponse?
    private(set) var error: (any Error)?

    func set(data: Data?, response: HTTPURLResponse?, error: (any Error)?) {
        lock.lock()
        self.data = data
        self.response = response
        self.error = error
        lock.unlock()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
