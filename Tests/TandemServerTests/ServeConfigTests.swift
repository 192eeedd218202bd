import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// `tandem serve --config FILE` through the built binary (decisions A49): the file's settings
/// take effect, flags on the command line win over them, and a bad file stops the server before
/// it serves, with a message naming the key and exit status 64.
@Suite("tandem serve --config")
struct ServeConfigTests {
    /// Writes `text` to a temporary file; returns its path.
    static func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "tandem-config-" + UUID().uuidString + ".json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func theFilesSettingsTakeEffectAndFlagsWin() throws {
        let provider = try OIDCProvider()
        let path = try Self.file("""
            {
              "password-hash": "m=64,t=1,p=1",
              "sign-in-attempts": "1,50,900",
              "public-url": "https://file.example",
              "webhook-allow": ["127.0.0.0/8"],
              "oidc-exchange": ["\(TestServer.container),\(provider.issuer),config-audience"],
              "participant-limit": 5,
              "quiet": true
            }
            """)
        let server = try TestServer(extraArguments: ["--config", path, "--public-url", "https://flag.example/"])

        // The flag's public URL, not the file's.
        let anonymous = try server.post("records/query", ["query": ["recordType": "Note"]], token: .some(nil))
        #expect(anonymous.json["redirectURL"]?.stringValue?.hasPrefix("https://flag.example/signin") == true, "\(anonymous.text)")

        // The file's sign-in limit: one failure, then THROTTLED even for the right password.
        let app = try server.apiToken()
        let email = "\(unique("configured"))@example.com".lowercased()
        try server.signUpVerified(email, password: "the right one", apiToken: app)
        #expect(try server.auth("signin", ["email": .string(email), "password": "a wrong one", "consent": true], apiToken: app).status == 401)
        let throttled = try server.auth("signin", ["email": .string(email), "password": "the right one", "consent": true], apiToken: app)
        #expect(throttled.json.serverErrorCode == "THROTTLED", "\(throttled.text)")

        // The file's repeatable settings: the provider on loopback is reachable and trusted.
        let idToken = try provider.mint(sub: unique("configured"), clientID: "config-audience")
        let exchanged = try server.auth("token/exchange", ["idToken": .string(idToken)], apiToken: app)
        #expect(exchanged.status == 200, "\(exchanged.text)")

        // "quiet": true — no request log on standard error (which is written every 50 ms otherwise).
        Thread.sleep(forTimeInterval: 0.5)
        #expect(server.standardError?.value.contains("/auth/1/") == false, "\(server.standardError?.value ?? "")")
    }

    static let badFiles: [(label: String, text: String, message: String)] = [
        ("an unknown key", #"{"port": 0, "smtp-host": "mail.example"}"#, #"unknown key "smtp-host""#),
        ("a flag spelled with its dashes", #"{"--port": 0}"#, "write keys without the leading --"),
        ("a value the flag refuses", #"{"smtp-url": "http://mail.example"}"#, #""smtp-url": --smtp-url must start with smtp:// or smtps://"#),
        ("a bad number", #"{"participant-limit": 1}"#, #""participant-limit": --participant-limit must be at least 2"#),
        ("a malformed provider", #"{"oidc-exchange": ["only-a-container"]}"#, #""oidc-exchange": "#),
        ("a string for a switch", #"{"quiet": "yes"}"#, #""quiet" must be true or false, not a string"#),
        ("a number for a list", #"{"webhook-allow": 8}"#, #""webhook-allow" must be an array of strings"#),
        ("an object for a setting", #"{"port": {"number": 8080}}"#, #""port" must be a string or a number, not an object"#),
        // A number where a place is named made a directory called 42 (P60).
        ("a number for the store", #"{"store": 42}"#, #""store" must be a string, not a"#),
        ("a number for the data directory", #"{"data": 7}"#, #""data" must be a string, not a"#),
        ("not JSON", #"{"port": 8080,}"#, "not valid JSON: line 1"),
        ("a key twice", #"{"port": 1, "port": 2}"#, "not valid JSON"),
        ("not an object", #"["port", 8080]"#, "must hold one JSON object of settings, found an array"),
    ]

    @Test(arguments: badFiles.map(\.label))
    func aBadFileStopsTheServerNamingTheProblem(label: String) throws {
        let row = Self.badFiles.first { $0.label == label }!
        let path = try Self.file(row.text)
        let data = NSTemporaryDirectory() + "tandem-config-data-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data); try? FileManager.default.removeItem(atPath: path) }
        let result = try runTandem(["serve", "--config", path, "--port", "0", "--data", data, "--stop-on-stdin-eof"])
        #expect(result.status == 64, "\(label): \(result.error.prefix(400))")
        let first = result.error.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("--config \(path): ") && first.contains(row.message), "\(label): \(first)")
        #expect(!FileManager.default.fileExists(atPath: data + "/tandem.sqlite"), "nothing was started")
    }

    @Test func aMissingFileIsNamed() throws {
        let result = try runTandem(["serve", "--config", "/nonexistent/tandem.json", "--port", "0", "--stop-on-stdin-eof"])
        #expect(result.status == 64 && result.error.hasPrefix("--config /nonexistent/tandem.json: cannot read the file"), "\(result.error.prefix(300))")
    }

    @Test func helpDocumentsTheFile() throws {
        let result = try runTandem(["serve", "--help"])
        #expect(result.status == 0 && result.output.contains("[--config FILE.json]"))
    }
}
