import Foundation
import TandemTestSupport
import TandemCore

/// One server for the universal-link suites, fetching association files from a local
/// `AssociationOrigin` and keeping them 2 seconds; tests use their own app IDs and domains.
enum LinksServer {
    nonisolated(unsafe) private static var instance: (TestServer, AssociationOrigin, String)?
    private static let lock = NSLock()
    static let ttl = 2.0

    /// The server, the origin it fetches from, and an API token of its container.
    static var shared: (server: TestServer, origin: AssociationOrigin, apiToken: String) {
        get throws {
            lock.lock()
            defer { lock.unlock() }
            if let instance { return instance }
            let origin = try AssociationOrigin()
            let server = try TestServer(extraArguments: ["--links-fetch-origin", origin.origin, "--links-ttl", String(Int(ttl)),
                                                           "--webhook-allow", "127.0.0.0/8"])
            let apiToken = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
            instance = (server, origin, apiToken)
            return (server, origin, apiToken)
        }
    }

    /// A fresh app ID and domain, so parallel tests never collide.
    static func names() -> (app: String, domain: String) {
        let tag = UUID().uuidString.prefix(8).lowercased()
        return ("ABCDE12345.com.example.\(tag)", "\(tag).example.com")
    }

    /// A file giving `app` these components (a JSON array).
    static func file(_ app: String, _ components: String) -> String {
        #"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": \#(components)}]}}"#
    }

    /// `tandem …` against the server's data directory.
    static func tandem(_ arguments: [String]) throws -> (status: Int32, output: String, error: String) {
        try runTandem(arguments + ["--data", try shared.server.dataDirectory])
    }

    /// GET links/match for `url` and `app`.
    static func match(_ url: String, app: String, token: String?? = .none) throws -> TestServer.Response {
        let server = try shared.server
        return try server.request("GET", "\(server.baseURL)/tandem/1/\(TestServer.container)/development/links/match?url=\(escape(url))&app=\(escape(app))",
                                  token: token)
    }

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }

    /// Writes `text` to a temporary file; returns its path.
    static func temporaryFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "aasa-" + UUID().uuidString
        ExitCleanup.removeAtExit(path)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

extension TestServer.Response {
    var decision: String? { json["decision"]?.stringValue }
    var ruleLocation: String? { json["rule"]?["location"]?.stringValue }
    var fileDomain: String? { json["file"]?["domain"]?.stringValue }
    var fileSource: String? { json["file"]?["source"]?.stringValue }
}
