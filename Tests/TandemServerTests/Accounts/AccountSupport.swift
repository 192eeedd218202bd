import Foundation
import TandemTestSupport
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
              container: String = TestServer.container, method: String? = nil, headers: [String: String] = [:]) throws -> Response {
        var url = "\(baseURL)/auth/1/\(container)/\(operation)"
        if let apiToken { url += "?ckAPIToken=" + (apiToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "") }
        return try request(method ?? (body == nil ? "GET" : "POST"), url, body: body.map { Data(JSONWriter.bytes($0)) }, token: .some(bearer),
                           headers: headers)
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

    /// A value read from the data directory's database with the sqlite3 command-line shell, or,
    /// under the PostgreSQL test store switch (`TestStore`), from its database with psql, in
    /// SQLite's output: columns joined by `|`, one row a line, booleans `1`/`0` (psql's `t`/`f`);
    /// SQLite's blob literals `X'…'` are given to psql as `'\x…'::bytea`. Otherwise the query
    /// must be valid in both dialects.
    func sqlite(_ query: String) throws -> String { try Self.query(dataDirectory: dataDirectory, query) }

    /// ``sqlite(_:)`` for any data directory.
    static func query(dataDirectory: String, _ query: String) throws -> String {
        let process = Process()
        if TestStore.isPostgres {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
            let translated = query.replacingOccurrences(of: #"\b[Xx]'([0-9A-Fa-f]*)'"#, with: #"'\\x$1'::bytea"#, options: .regularExpression)
            process.arguments = ["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", translated,
                                 try TestStore.url(forDataDirectory: dataDirectory)]
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
            // Waits up to 5 s for the server's writer rather than failing at once, and reports a
            // failed statement instead of returning an empty answer.
            process.arguments = ["-bail", "-cmd", ".timeout 5000", dataDirectory + "/tandem.sqlite", query]
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let problem = err.fileHandleForReading.readDataToEndOfFile()
        let processEnd = process.waitForTermination()
        guard processEnd.status == 0 else {
            throw TestFailure("\(process.executableURL?.lastPathComponent ?? "") failed (\(processEnd.status)): "
                + "\(String(decoding: problem, as: UTF8.self)) for \(query)")
        }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard TestStore.isPostgres else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).map { $0 == "t" ? "1" : $0 == "f" ? "0" : String($0) }
                .joined(separator: "|")
        }.joined(separator: "\n")
    }
}
