import Foundation
import TandemCore

/// Calls to the accounts API (`/auth/1/{container}/...`) of a test server.
extension TestServer {
    /// A cheap Argon2id cost for tests (64 KiB, 1 pass): sign-in logic, not hashing cost, is under test.
    static let cheapHash = ["--password-hash", "m=64,t=1,p=1"]

    /// Creates an API token of `container` with allowed origins; returns it.
    func apiToken(origins: [String] = [], callback: String? = nil, container: String = TestServer.container) throws -> String {
        var arguments = ["token", "create", "--api", "--container", container, "--data", dataDirectory]
        if !origins.isEmpty { arguments += ["--origin", origins.joined(separator: ",")] }
        if let callback { arguments += ["--sign-in-callback", callback] }
        return try TestServer.admin(arguments)
    }

    /// POSTs (or GETs, with `body` nil) an accounts operation.
    func auth(_ operation: String, _ body: JSONValue? = nil, apiToken: String? = nil, bearer: String? = nil,
              container: String = TestServer.container, method: String? = nil) throws -> Response {
        var url = "\(baseURL)/auth/1/\(container)/\(operation)"
        if let apiToken { url += "?ckAPIToken=" + (apiToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
        return try request(method ?? (body == nil ? "GET" : "POST"), url, body: body.map { Data(JSONWriter.bytes($0)) }, token: .some(bearer))
    }

    /// Signs up `email` and has the operator verify it (no SMTP in these tests); returns the user record name.
    @discardableResult
    func signUpVerified(_ email: String, password: String, apiToken: String, name: String? = nil) throws -> String {
        var body: JSONObject = ["email": .string(email), "password": .string(password)]
        if let name { body["name"] = .string(name) }
        let response = try auth("signup", .object(body), apiToken: apiToken)
        guard response.status == 200 else { throw TestFailure("signup: \(response.status) \(response.text)") }
        let line = try TestServer.admin(["user", "verify", email, "--data", dataDirectory])
        return String(line.prefix { $0 != "\t" })
    }

    /// Signs in with consent; returns the web auth token.
    func signIn(_ email: String, password: String, apiToken: String, device: String? = nil) throws -> String {
        var body: JSONObject = ["email": .string(email), "password": .string(password), "consent": true]
        if let device { body["device"] = .string(device) }
        let response = try auth("signin", .object(body), apiToken: apiToken)
        guard let token = response.json["ckWebAuthToken"]?.stringValue else { throw TestFailure("signin: \(response.status) \(response.text)") }
        return token
    }

    /// users/current with a user token: the user record name, or the error code.
    func currentUser(_ token: String, container: String = TestServer.container) throws -> String {
        let response = try request("GET", databaseURL("users/current", database: "public", container: container), token: .some(token))
        return response.json["userRecordName"]?.stringValue ?? response.json.serverErrorCode ?? "HTTP \(response.status)"
    }

    /// A value read from the data directory's database with the sqlite3 command-line shell.
    func sqlite(_ query: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        // Wait for the server's write lock rather than fail silently with "database is locked".
        process.arguments = ["-cmd", ".timeout 10000", dataDirectory + "/tandem.sqlite", query]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
