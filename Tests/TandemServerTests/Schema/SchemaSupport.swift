import Foundation
import TandemCore

/// The `.ckdb` files app teams wrote, from the schema module's test fixtures.
enum SchemaFixtures {
    static var directory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TandemSchemaTests/Fixtures")
    }

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".ckdb") }.sorted()
    }

    static func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
}

/// A test server with its own container per test, an admin token and helpers for schemas.
extension TestServer {
    /// A fresh container in this server's data directory.
    func makeContainer(_ prefix: String = "iCloud.com.example.schema") throws -> String {
        let id = "\(prefix).\(UUID().uuidString.prefix(8).lowercased())"
        try TestServer.admin(["container", "create", id, "--data", dataDirectory])
        return id
    }

    /// Writes `text` to a temporary `.ckdb` file and imports it with the CLI.
    @discardableResult
    func importSchema(_ text: String, container: String, environment: String, force: Bool = false) throws -> (status: Int32, output: String, error: String) {
        let path = NSTemporaryDirectory() + "schema-" + UUID().uuidString + ".ckdb"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try runTandem(["schema", "import", path, "--container", container, "--environment", environment, "--data", dataDirectory]
                             + (force ? ["--force"] : []))
    }

    func exportSchema(container: String, environment: String) throws -> String {
        let result = try runTandem(["schema", "export", "--container", container, "--environment", environment, "--data", dataDirectory])
        guard result.status == 0 else { throw TestFailure("export failed: \(result.error)") }
        return result.output
    }

    /// POSTs to a database operation of any container, environment and database; `token` nil is anonymous.
    func post(_ operation: String, _ body: JSONValue, container: String, environment: String = "development",
              database: String = "private", token: String?) throws -> Response {
        try request("POST", databaseURL(operation, database: database, environment: environment, container: container),
                    body: Data(JSONWriter.bytes(body)), token: .some(token))
    }

    /// Creates one record; returns the response's first record item.
    func save(_ name: String, type: String, fields: JSONObject, container: String, environment: String = "development",
              database: String = "private", token: String?) throws -> JSONValue {
        let response = try post("records/modify", Body.modify([Body.operation("create", name: name, recordType: type, fields: fields)]),
                                container: container, environment: environment, database: database, token: token)
        return response.status == 200 ? response.json.record(0) : response.json
    }

    func query(_ query: JSONValue, container: String, environment: String = "development", database: String = "private",
               token: String?) throws -> Response {
        try post("records/query", ["query": query], container: container, environment: environment, database: database, token: token)
    }
}

/// One server for the schema suites: they change schemas, so they keep off the shared server.
enum SchemaServer {
    private static let lazy = LazyTestServer()
    static var server: TestServer { get throws { try lazy.server } }
}
