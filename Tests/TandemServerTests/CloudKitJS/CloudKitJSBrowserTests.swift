import Foundation
import Testing
import TandemCore

/// CloudKit JS's whole sign-in and first save from a page on another origin, in headless
/// Chromium (Tests/Browser/ckjs_cors_flow.py; `scripts/bootstrap --test` installs Chromium):
/// users/caller → 421 with redirectURL read across origins, window.open(redirectURL, ""),
/// sign-in with a password, the first `{ckSession}` message, users/caller with the token, and
/// records/modify with `content-type: text/plain` (decisions J10; issue 17 item 5).
@Suite struct CloudKitJSBrowserTests {
    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/ckjs_cors_flow.py").path
    }

    @Test(.timeLimit(.minutes(5)))
    func anAppOnAnotherOriginSignsInAndSavesARecordInHeadlessChromium() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let app = try server.apiToken()
        let email = "\(unique("ckjs-browser"))@example.com".lowercased()
        let user = try server.signUpVerified(email, password: "browser password", apiToken: app)
        let run = try LandingPageBrowserTests.python([
            Self.driver, "--server", server.baseURL, "--container", TestServer.container, "--email", email, "--password", "browser password",
            "--user", user, "--tandem", TestServer.binary, "--data", server.dataDirectory,
        ], timeout: 240)
        #expect(run.status == 0, "ckjs_cors_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
    }
}
