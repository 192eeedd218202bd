import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The web console end to end in headless Chromium (Tests/Browser/console_flow.py; `scripts/bootstrap
/// --test` installs Chromium): first administrator, sign-in, a container and an API token, a
/// schema saved as `.ckdb` text (a typo refused at its line and column first), a field added with
/// the schema page's form (a bad index refused beside it first), the diff and the deployment, a
/// record created, edited, refused and queried in the data browser, the live request log and the charts; an account that is
/// not an administrator with its own data, share and sessions, a form over its limit, a refused page and its Sign out (C50–C54);
/// at desktop width and at 390 px, keyboard only. Screenshots go to `.build/screenshots/console/` for a reviewer to look at
/// (`scripts/console-screenshots` copies three into docs/screenshots/ for the README).
@Suite struct ConsoleBrowserTests {
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    @Test(.timeLimit(.minutes(8)))
    func theConsoleWorksInHeadlessChromium() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let code = try #require(server.setupCode, "no setup URL printed: \(server.standardError?.value ?? "")")
        let screenshots = ProcessInfo.processInfo.environment["TANDEM_BROWSER_SCREENSHOTS"].map { $0 + "/console" }
            ?? Self.root.appendingPathComponent(".build/screenshots/console").path
        let driver = Self.root.appendingPathComponent("Tests/Browser/console_flow.py").path
        // An account that is not an administrator, with a password and a share of its own.
        let member = "member@example.com"
        let recordName = try server.signUpVerified(member, password: "member password", apiToken: try server.apiToken(origins: ["https://app.example"]))
        let token = try TestServer.admin(["token", "create", "--user", member, "--data", server.dataDirectory])
        let note = try server.shareNote(owner: Person(recordName: recordName, email: member, token: token), title: "Trip to Porto")
        let run = try LandingPageBrowserTests.python([
            driver, "--server", server.baseURL, "--setup-url", "\(server.baseURL)/console/setup?code=\(code)", "--screenshots", screenshots,
            "--member-email", member, "--member-password", "member password", "--member-container", TestServer.container, "--member-share", note.guid,
        ], timeout: 360)
        #expect(run.status == 0, "console_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE kind = 'api' AND container_id = 'iCloud.com.example.browser' AND origins = 'https://app.example'") == "1",
                "the token the browser created is in the store")
    }
}
