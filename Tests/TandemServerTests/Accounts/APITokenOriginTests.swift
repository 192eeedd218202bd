import Foundation
import Testing
import TandemCore
@testable import TandemServer

/// An API token's allowed origins and sign-in callback are checked before anything is written
/// (decisions A8, A42; QA: `--origin` took wildcards, paths and junk): an origin is exactly
/// `http(s)://host[:port]`, as a browser's `Origin` header names it.
@Suite struct APITokenOriginTests {
    /// (value, why it is refused)
    static let badOrigins: [(String, String)] = [
        ("*", "wildcard"), ("https://*.example.com", "wildcard"), ("https://app.example/path", "no path"),
        ("https://app.example/?x=1", "no path"), ("https://app.example#top", "no path"), ("https://user@app.example", "user name"),
        ("https://user:secret@app.example", "user name"), ("ftp://app.example", "http:// or https://"), ("app.example", "http:// or https://"),
        ("javascript:alert(1)", "http:// or https://"), ("https://", "valid host"), ("https://app.example:0", "valid host"),
        ("https://app.example:99999", "valid host"), ("https://app.example:", "valid host"), ("https://app example", "valid host"),
        ("https://app.example%2Fevil", "valid host"), ("https://-app.example", "valid host"), ("https://app..example", "valid host"),
        ("https://[::1", "valid host"), ("https://[zz::1]", "valid host"), ("https://ａpp.example", "valid host"),
        ("https://a.example,", "empty"),
    ]

    @Test(arguments: badOrigins)
    func aBadOriginIsRefusedAndNothingIsWritten(origin: String, why: String) throws {
        let data = NSTemporaryDirectory() + "tandem-origin-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        // A data directory that does not exist yet is not created by a refused command.
        let fresh = try runTandem(["token", "create", "--api", "--container", TestServer.container, "--origin", origin, "--data", data])
        #expect(fresh.status == 64, "\(origin): \(fresh)")
        #expect(fresh.error.contains("is not an origin") && fresh.error.contains(why), "\(origin): \(fresh.error)")
        #expect(!FileManager.default.fileExists(atPath: data), "\(origin): nothing was written")
        // In an existing one, no token is added.
        try TestServer.admin(["container", "create", TestServer.container, "--data", data])
        let before = try Self.sqlite(data, "SELECT count(*) FROM tokens")
        let refused = try runTandem(["token", "create", "--api", "--container", TestServer.container, "--origin", "https://ok.example",
                                     "--origin", origin, "--data", data])
        #expect(refused.status == 64 && refused.output.isEmpty, "\(origin): \(refused)")
        #expect(try Self.sqlite(data, "SELECT count(*) FROM tokens") == before)
    }

    @Test func originsAreStoredInCanonicalFormAndTheCallbackMustBeOnOne() throws {
        let data = NSTemporaryDirectory() + "tandem-origin-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: data) }
        try TestServer.admin(["container", "create", TestServer.container, "--data", data])
        let made = try runTandem(["token", "create", "--api", "--container", TestServer.container, "--origin",
                                  "HTTPS://App.Example:443/, http://localhost:8080,http://[::1]:3000", "--origin", "https://b.example:8443",
                                  "--sign-in-callback", "https://app.example/signed-in?from=tandem", "--data", data])
        #expect(made.status == 0, "\(made)")
        #expect(try Self.sqlite(data, "SELECT origins || ' | ' || callback FROM tokens WHERE kind = 'api'").replacingOccurrences(of: "\n", with: " ")
                == "https://app.example http://localhost:8080 http://[::1]:3000 https://b.example:8443 | https://app.example/signed-in?from=tandem")
        for callback in ["https://app.example/cb#fragment", "https://elsewhere.example/cb", "https://app.example/c b", "https://user@app.example/cb",
                         "javascript:alert(1)"] {
            let refused = try runTandem(["token", "create", "--api", "--container", TestServer.container, "--origin", "https://app.example",
                                         "--sign-in-callback", callback, "--data", data])
            #expect(refused.status == 64 && refused.error.contains("sign-in callback"), "\(callback): \(refused)")
        }
        #expect(try Self.sqlite(data, "SELECT count(*) FROM tokens WHERE kind = 'api'") == "1")
    }

    /// What a browser sends as `Origin` is an origin; the rest is not (the CORS and sign-in
    /// checks compare against the same canonical form).
    @Test func browserOriginsNormalize() {
        #expect(Origins.normalize("https://app.example") == "https://app.example")
        #expect(Origins.normalize("http://localhost:8080") == "http://localhost:8080")
        #expect(Origins.normalize("http://127.0.0.1:80") == "http://127.0.0.1")
        #expect(Origins.normalize("null") == nil)
        #expect(Origins.origin(ofURL: "https://app.example:8443/a/b?c#d") == "https://app.example:8443")
        #expect(Origins.origin(ofURL: "https://user@app.example/") == nil)
    }

    static func sqlite(_ data: String, _ query: String) throws -> String {
        try TestServer.query(dataDirectory: data, query)
    }
}
