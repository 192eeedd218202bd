import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The share page end to end in headless Chromium (Tests/Browser/share_page.py; `scripts/bootstrap
/// --test` installs Chromium): sign-in from the page and back, the owner's management, the
/// invitee's acceptance, a console administrator acting for the owner (C17), at desktop width
/// and at 390 px, keyboard only. Screenshots go to
/// `.build/screenshots/share/` for a reviewer to look at.
@Suite struct SharePageBrowserTests {
    /// A share with `title` of a new root record in a new zone of the user with `token`; its shortGUID.
    static func share(_ server: TestServer, token: String, title: String, publicPermission: String, thumbnail: Data? = nil) throws -> String {
        let zone = unique("page")
        let zoned = try server.post("zones/modify", ["operations": [["operationType": "create", "zone": ["zoneID": ["zoneName": .string(zone)]]]]],
                                    token: .some(token))
        guard zoned.status == 200 else { throw TestFailure("zone: \(zoned.text)") }
        var fields: JSONObject = ["cloudkit.title": Body.field(.string(title))]
        if let thumbnail { fields["cloudkit.thumbnailImageData"] = Body.field(.string(thumbnail.base64EncodedString()), "BYTES") }
        let root = unique("plan")
        let response = try server.post("records/modify", Body.modify([
            Body.operation("create", name: root, recordType: "Plan", fields: ["name": Body.field(.string(title))]),
            Body.operation("create", name: unique("share"), recordType: "cloudkit.share", fields: fields,
                           extra: ["forRecord": ["recordName": .string(root)], "publicPermission": .string(publicPermission)]),
        ], zone: zone), token: .some(token))
        guard let guid = response.json.record(1)["shortGUID"]?.stringValue else { throw TestFailure("share: \(response.text)") }
        return guid
    }

    @Test(.timeLimit(.minutes(5)))
    func theSharePageWorksInHeadlessChromium() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let app = try server.apiToken()
        let owner = "owner-\(UUID().uuidString.prefix(6))@example.com".lowercased()
        let invitee = "invitee-\(UUID().uuidString.prefix(6))@example.com".lowercased()
        try server.signUpVerified(owner, password: "owner password", apiToken: app, name: "Ada Owner")
        try server.signUpVerified(invitee, password: "invitee password", apiToken: app, name: "Grace Invitee")
        let token = try TestServer.admin(["token", "create", "--user", owner, "--data", server.dataDirectory])
        let title = "Garden plan"
        let guid = try Self.share(server, token: token, title: title, publicPermission: "NONE")
        let open = try Self.share(server, token: token, title: "Open day", publicPermission: "READ_ONLY", thumbnail: LandingPageBrowserTests.png)
        let other = try Self.share(server, token: token, title: "Book list", publicPermission: "NONE")
        try server.addAdmin("root@example.com", password: "admin password")

        let screenshots = ProcessInfo.processInfo.environment["TANDEM_BROWSER_SCREENSHOTS"].map { $0 + "/share" }
            ?? ConsoleBrowserTests.root.appendingPathComponent(".build/screenshots/share").path
        let driver = ConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/share_page.py").path
        let run = try LandingPageBrowserTests.python([
            driver, "--server", server.baseURL, "--public", open, "--public-title", "Open day", "--share", guid, "--title", title,
            "--owner-email", owner, "--owner-password", "owner password", "--invitee-email", invitee, "--invitee-password", "invitee password",
            "--admin-email", "root@example.com", "--admin-password", "admin password", "--container", TestServer.container,
            "--console-share", other, "--screenshots", screenshots,
        ], timeout: 240)
        #expect(run.status == 0, "share_page.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
        // What the browser did is in the store: the share it stopped is gone.
        #expect(try server.sqlite("SELECT count(*) FROM shares WHERE short_guid = '\(guid)'") == "0", "the stopped share is gone")
        #expect(try server.sqlite("SELECT count(*) FROM share_participants WHERE email = 'friend@example.com'") == "1",
                "the administrator's invitation is stored")
    }
}
