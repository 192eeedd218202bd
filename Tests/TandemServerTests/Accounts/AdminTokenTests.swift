import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// Admin tokens expire and are revoked (issue 16, decisions A14): made, listed and revoked with
/// `tandem token create|list|revoke --admin`, presented with curl to the schema endpoint.
@Suite("Admin tokens")
struct AdminTokenTests {
    /// `curl -s` with an admin token; returns the HTTP status and the body.
    func curl(_ url: String, token: String) throws -> (status: Int, body: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        process.arguments = ["-s", "-w", "\n%{http_code}", "-H", "Authorization: Bearer \(token)", url]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitForTermination()
        let text = String(decoding: data, as: UTF8.self)
        let status = Int(text.split(separator: "\n").last ?? "") ?? 0
        return (status, String(text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().joined(separator: "\n")))
    }

    func json(_ body: String) -> JSONValue { (try? JSONParser.parse(Array(body.utf8))) ?? .null }

    @Test func adminTokensExpireAndAreRevokedAtOnce() throws {
        let server = try TestServer()
        let data = ["--data", server.dataDirectory]
        let export = "\(server.baseURL)/tandem/1/\(TestServer.container)/development/schema/export"
        let lasting = try runTandem(["token", "create", "--admin"] + data)
        let brief = try runTandem(["token", "create", "--admin", "--expires", "2s"] + data)
        let lastingToken = lasting.output.trimmingCharacters(in: .whitespacesAndNewlines)
        let briefToken = brief.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(lasting.status == 0 && lastingToken.hasPrefix("tda_") && briefToken.hasPrefix("tda_"), "\(lasting) \(brief)")
        #expect(try curl(export, token: lastingToken).status == 200)
        #expect(try curl(export, token: briefToken).status == 200)

        let listed = try runTandem(["token", "list", "--admin"] + data)
        let lines = listed.output.split(separator: "\n").map { $0.split(separator: "\t").map(String.init) }
        #expect(lines.count == 2 && lines.allSatisfy { $0.count == 4 && $0[0].count == 16 && $0[1] == "active" }, "\(listed.output)")
        #expect(lines.filter { $0[3] == "expires=never" }.count == 1, "\(listed.output)")
        let lastingID = try #require(lines.first { $0[3] == "expires=never" }?[0])

        // Revoked by another process: the server refuses it at its next request.
        let revoke = try runTandem(["token", "revoke", "--admin", lastingID] + data)
        #expect(revoke.status == 0 && revoke.output.contains("revoked admin token \(lastingID)"), "\(revoke)")
        let refused = try curl(export, token: lastingToken)
        #expect(refused.status == 401 && json(refused.body).serverErrorCode == "AUTHENTICATION_FAILED", "\(refused)")
        #expect(json(refused.body)["tandemReason"] == "SESSION_REVOKED", "\(refused)")

        Thread.sleep(forTimeInterval: 2.1)
        let expired = try curl(export, token: briefToken)
        #expect(expired.status == 401 && json(expired.body)["tandemReason"] == "SESSION_EXPIRED", "\(expired)")
        let after = try runTandem(["token", "list", "--admin"] + data)
        #expect(after.output.contains("\(lastingID)\trevoked") && after.output.contains("\texpired\t"), "\(after.output)")

        // Unknown tokens, IDs revoked twice, malformed IDs and durations.
        #expect(json(try curl(export, token: "tda_unknown").body)["tandemReason"] == nil)
        #expect(try runTandem(["token", "revoke", "--admin", lastingID] + data).status == 1)
        #expect(try runTandem(["token", "revoke", "--admin", "xyz"] + data).status == 1)
        #expect(try runTandem(["token", "create", "--admin", "--expires", "soon"] + data).status == 64)
        #expect(try runTandem(["token", "create", "--admin", "--expires", "0"] + data).status == 64)
        #expect(try runTandem(["token", "revoke", "--admin"] + data).status == 64)
    }

    @Test(arguments: [("3600", 3600), ("90s", 90), ("90m", 5400), ("12h", 43_200), ("30d", 2_592_000)] as [(String, Int64)])
    func durationsAreReadInTheirUnits(text: String, seconds: Int64) throws {
        let server = try Self.sharedServer()
        let made = try runTandem(["token", "create", "--admin", "--expires", text, "--data", server.dataDirectory])
        #expect(made.status == 0)
        let listed = try runTandem(["token", "list", "--admin", "--data", server.dataDirectory])
        let expires = listed.output.split(separator: "\n").compactMap { line -> Date? in
            guard let field = line.split(separator: "\t").last, field.hasPrefix("expires="), field != "expires=never" else { return nil }
            return ISO8601DateFormatter().date(from: String(field.dropFirst("expires=".count)))
        }
        #expect(expires.contains { abs($0.timeIntervalSinceNow - Double(seconds)) < 30 }, "\(listed.output)")
    }

    static let shared = LazyAccountServer([])
    static func sharedServer() throws -> TestServer { try shared.get().server }
}
