import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// A browser's form over its page's body limit (decisions C53): the console's (64 KiB, 1 MiB for
/// a schema import) and the share page's (16 KiB) forms get a `413` page under the page set's
/// CSP, with a link back to the form, and the store is unchanged; other bodies keep the JSON
/// `LIMIT_EXCEEDED` error, whose reason says it once.
@Suite struct ConsoleFormLimitTests {
    /// The `href` of the page's `id="back"` link.
    static func back(_ html: String) -> String? {
        guard let range = html.range(of: #"id="back" href="[^"]*""#, options: .regularExpression) else { return nil }
        return String(html[range].dropFirst(#"id="back" href=""#.count).dropLast())
    }

    @Test func aConsoleFormOverItsLimitGetsAPageWithItsBackLink() throws {
        let browser = try ConsoleTests.admin()
        let server = browser.server
        let id = "iCloud.com.example." + String(repeating: "a", count: 70 * 1024)
        let referer = server.baseURL + "/console/containers/\(TestServer.container)?x=1"
        let refused = try browser.request("POST", "/console/containers", form: ["id": id, "csrf": browser.csrf], headers: ["Referer": referer])
        #expect(refused.status == 413, "\(refused.status) \(refused.text.prefix(300))")
        #expect(refused.headers["content-type"] == "text/html; charset=utf-8" && refused.headers["content-security-policy"]?.hasPrefix("default-src 'none'") == true)
        #expect(refused.text.contains("Nothing was saved: this form holds more than the 64 KiB this page takes"), "\(refused.text)")
        #expect(Self.back(refused.text) == "/console/containers/\(TestServer.container)?x=1")
        #expect(try server.sqlite("SELECT count(*) FROM containers WHERE length(id) > 1000") == "0")
        // Only a console path of the Referer is linked, whatever origin it names; otherwise the console's start.
        let foreign = try browser.request("POST", "/console/containers", form: ["id": id], headers: ["Referer": "https://elsewhere.example/phish"])
        #expect(foreign.status == 413 && Self.back(foreign.text) == "/console/")
        let none = try browser.request("POST", "/console/containers", form: ["id": id])
        #expect(none.status == 413 && Self.back(none.text) == "/console/")

        // A schema's .ckdb page takes 1 MiB (C35).
        let schema = "/console/containers/\(TestServer.container)/schema/development/ckdb"
        let big = try browser.request("POST", schema, form: ["ckdb": String(repeating: "x", count: (1 << 20) + 10), "csrf": browser.csrf],
                                      headers: ["Referer": server.baseURL + schema])
        #expect(big.status == 413 && big.text.contains("more than the 1024 KiB") && Self.back(big.text) == schema, "\(big.status) \(big.text.prefix(300))")
    }

    @Test func aSharePageFormOverItsLimitGetsAPage() throws {
        let server = try ConsoleTests.server
        let note = try server.shareNote(owner: try server.person("owner"))
        let browser = ConsoleClient(server)
        let email = String(repeating: "a", count: 17 * 1024) + "@example.com"
        let refused = try browser.request("POST", "/share/\(note.guid)/invite", form: ["email": email, "permission": "READ_ONLY"])
        #expect(refused.status == 413 && refused.headers["content-type"] == "text/html; charset=utf-8", "\(refused.status) \(refused.text.prefix(300))")
        #expect(refused.headers["referrer-policy"] == "no-referrer" && refused.text.contains("data-error-code=\"LIMIT_EXCEEDED\""))
        #expect(refused.text.contains("more than the 16 KiB") && Self.back(refused.text) == "/share/\(note.guid)")
    }

    @Test func aBodyThatIsNotAFormKeepsTheJSONErrorWithOneReason() throws {
        let browser = try ConsoleTests.admin()
        let body = String(repeating: "x", count: 70 * 1024)
        let response = try browser.request("POST", "/console/containers", form: ["id": body], headers: ["Content-Type": "application/json"])
        #expect(response.status == 413 && response.json.serverErrorCode == "LIMIT_EXCEEDED", "\(response.status) \(response.text.prefix(300))")
        #expect(response.json["reason"]?.stringValue == "the request body is larger than the 65536 bytes allowed here", "\(response.text)")
    }
}
