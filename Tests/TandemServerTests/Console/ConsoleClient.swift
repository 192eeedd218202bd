import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import TandemCore
import TandemTestSupport

/// A browser-like client of the web console over real HTTP: its own cookie jar (only what the
/// server set for `/console`), redirects not followed (so a test sees the 303 and its
/// `location`), and the CSRF field of the last page it read.
final class ConsoleClient: @unchecked Sendable {
    let server: TestServer
    /// Cookies by name, as the server set them.
    var cookies: [String: String] = [:]
    /// The `csrf` field of the last page with a form.
    var csrf = ""
    /// Every `Set-Cookie` header received, as sent.
    private(set) var setCookies: [String] = []

    init(_ server: TestServer) {
        self.server = server
    }

    /// A session that neither stores cookies nor follows redirects.
    private static let session: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        return URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }()

    final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }

    /// GET (or POST with `form`) `path` on the server; remembers cookies and the page's CSRF field.
    /// `headers`: more request headers (a `Referer`, another `Content-Type`).
    @discardableResult
    func request(_ method: String, _ path: String, form: [String: String]? = nil, cookies override: [String: String]? = nil,
                 headers: [String: String] = [:]) throws -> TestServer.Response {
        var request = URLRequest(url: URL(string: server.baseURL + path)!)
        request.httpMethod = method
        request.timeoutInterval = 60
        let jar = override ?? cookies
        if !jar.isEmpty { request.setValue(jar.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "), forHTTPHeaderField: "Cookie") }
        if let form {
            request.httpBody = Data(Self.encode(form).utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        Self.session.dataTask(with: request) { data, response, error in
            box.set(data: data, response: response as? HTTPURLResponse, error: error)
            done.signal()
        }.resume()
        done.wait()
        if let error = box.error { throw error }
        guard let http = box.response else { throw TestFailure("no HTTP response") }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers[String(describing: key).lowercased()] = String(describing: value) }
        let response = TestServer.Response(status: http.statusCode, body: box.data ?? Data(), headers: headers)
        if let header = headers["set-cookie"] {
            // Foundation joins several Set-Cookie headers with ", "; cookie values here never hold a comma.
            for one in header.components(separatedBy: ", ") {
                setCookies.append(one)
                let pair = one.split(separator: ";").first.map(String.init) ?? ""
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 2 else { continue }
                if one.lowercased().contains("max-age=0") { cookies[parts[0]] = nil } else { cookies[parts[0]] = parts[1] }
            }
        }
        if let field = Self.csrfField(response.text) { csrf = field }
        return response
    }

    func get(_ path: String) throws -> TestServer.Response { try request("GET", path) }

    /// POSTs a form with the remembered CSRF field (unless `fields` names its own `csrf`).
    @discardableResult
    func post(_ path: String, _ fields: [String: String] = [:]) throws -> TestServer.Response {
        var all = fields
        if all["csrf"] == nil { all["csrf"] = csrf }
        return try request("POST", path, form: all)
    }

    /// Signs in (reading the form first for its CSRF pair); returns the answer to the POST.
    @discardableResult
    func signIn(_ email: String, _ password: String) throws -> TestServer.Response {
        try get("/console/signin")
        return try post("/console/signin", ["email": email, "password": password])
    }

    static func csrfField(_ html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }.joined(separator: "&")
    }
}

extension TestServer {
    /// The first-run setup code the server printed to its terminal (standard error), waiting up to
    /// 10 s for the line: the server prints it just after it starts listening, so a loaded machine
    /// may answer the first request before the line reaches the pipe.
    var setupCode: String? {
        let deadline = Date().addingTimeInterval(10)
        repeat {
            if let code = printedSetupCode { return code }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        return nil
    }

    /// The setup code if the server has printed it by now; no waiting.
    var printedSetupCode: String? {
        guard let text = standardError?.value, let range = text.range(of: #"/console/setup\?code=[A-Za-z0-9_-]+"#, options: .regularExpression) else { return nil }
        return String(text[range].split(separator: "=").last!)
    }

    /// Runs `tandem ARGUMENTS --data DIR` with `input` on standard input; returns status and output.
    func command(_ arguments: [String], input: String) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: TestServer.binary)
        process.arguments = try TestStore.adding(arguments + ["--data", dataDirectory])
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        let processEnd = process.waitForTermination()
        return (processEnd.status, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    /// Makes `email` a server administrator with `password` (`tandem admin add --password-stdin`).
    func addAdmin(_ email: String, password: String) throws {
        let run = try command(["admin", "add", email, "--password-stdin"], input: password + "\n")
        guard run.status == 0 else { throw TestFailure("admin add: \(run.status) \(run.errors)") }
    }
}

extension TestServer {
    /// A new account that is not a server administrator (unique email, password `password`,
    /// signed up through the accounts API and verified), with a CLI user token for the API, and
    /// a console client signed in as it (decisions C50).
    func consoleMember(_ name: String, password: String = "member password") throws -> (person: Person, console: ConsoleClient) {
        let email = "\(unique(name).lowercased())@example.com"
        let recordName = try signUpVerified(email, password: password, apiToken: try apiToken(origins: ["https://app.example"]))
        let token = try TestServer.admin(["token", "create", "--user", email, "--data", dataDirectory])
        let console = ConsoleClient(self)
        let answer = try console.signIn(email, password)
        guard answer.status == 303, console.cookies["tandem_console"] != nil else { throw TestFailure("member sign-in: \(answer.status) \(answer.text)") }
        try console.get("/console/")
        return (Person(recordName: recordName, email: email, token: token), console)
    }
}
