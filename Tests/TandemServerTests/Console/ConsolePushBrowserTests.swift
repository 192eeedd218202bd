import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The console's push and Shared with You pages in headless Chromium (Tests/Browser/console_push_flow.py),
/// keyboard only, at desktop width and at 390 px, against a server with a delivered webhook and
/// an app whose association file was uploaded. Screenshots go to `.build/screenshots/console/`.
@Suite struct ConsolePushBrowserTests {
    @Test(.timeLimit(.minutes(5)))
    func thePushAndSharedWithYouPagesWorkInHeadlessChromium() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--webhook-allow", "127.0.0.0/8"])
        try server.addAdmin("root@example.com", password: "browser password")
        let owner = try server.person("hooked")
        let receiver = try WebhookReceiver()
        _ = try server.subscribe(["subscriptionID": "browser-hook", "subscriptionType": "database", "webhookURL": .string(receiver.url)], as: owner)
        _ = try server.post("records/modify", Body.modify([Body.operation("create", name: "ping", recordType: "Item", fields: [:])]), as: owner, database: "private")
        #expect(receiver.waitFor(1).count == 1)
        let app = "ABCDE12345.com.example.browser", domain = "browser.example.com"
        _ = try TestServer.admin(["app", "add", app, "--container", TestServer.container, "--domains", "applinks:\(domain)", "--data", server.dataDirectory])
        let operatorToken = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
        let file = #"{"applinks": {"details": [{"appIDs": ["\#(app)"], "components": [{"/": "/buy/*"}]}]}}"#
        #expect(try server.request("POST", "\(server.baseURL)/tandem/1/\(TestServer.container)/development/links/upload?domain=\(domain)",
                                   body: Data(file.utf8), token: .some(operatorToken)).status == 200)
        let screenshots = ProcessInfo.processInfo.environment["TANDEM_BROWSER_SCREENSHOTS"].map { $0 + "/console" }
            ?? ConsoleBrowserTests.root.appendingPathComponent(".build/screenshots/console").path
        let driver = ConsoleBrowserTests.root.appendingPathComponent("Tests/Browser/console_push_flow.py").path
        let run = try LandingPageBrowserTests.python([
            driver, "--server", server.baseURL, "--email", "root@example.com", "--password", "browser password", "--container", TestServer.container,
            "--subscription", "browser-hook", "--app", app, "--domain", domain, "--screenshots", screenshots,
        ], timeout: 240)
        #expect(run.status == 0, "console_push_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
        #expect(try server.sqlite("SELECT count(*) FROM subscriptions WHERE subscription_id = 'browser-hook'") == "0", "the browser deleted the subscription")
    }
}
