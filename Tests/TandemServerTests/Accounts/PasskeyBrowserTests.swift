import Foundation
import Testing
import TandemCore

/// Passkeys end to end: sign up with a passkey on the sign-in page opened as a popup by an app
/// page, confirm the email, sign in with it (consent, then {ckSession}), sign out and sign in
/// again, in headless Chromium with its virtual authenticator (Tests/Browser/passkey_flow.py).
@Suite struct PasskeyBrowserTests {
    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/passkey_flow.py").path
    }

    @Test(.timeLimit(.minutes(5)))
    func signUpAndSignInWithAPasskeyInHeadlessChromium() throws {
        let server = try TestServer(extraArguments: TestServer.cheapHash)
        let email = "\(unique("passkey"))@example.com".lowercased()
        let run = try LandingPageBrowserTests.python([
            Self.driver, "--server", server.baseURL, "--container", TestServer.container, "--email", email,
            "--tandem", TestServer.binary, "--data", server.dataDirectory,
        ], timeout: 240)
        #expect(run.status == 0, "passkey_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")
        // The account has exactly one sign-in method: the passkey, with the counter it last sent.
        let rows = try server.sqlite("SELECT kind || ' ' || substr(secret, 1, 5) FROM sign_in_methods JOIN users ON users.record_name = sign_in_methods.user_record_name WHERE users.email = '\(email)'")
        #expect(rows == "passkey es256", "\(rows)")
    }
}
