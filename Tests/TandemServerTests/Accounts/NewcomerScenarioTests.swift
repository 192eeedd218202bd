import Foundation
import Testing
import TandemCore

/// Issue 16's "done when" walk-through, as a newcomer would do it: a static web app on another
/// origin signs a person up with a password (email confirmed from a real SMTP server on loopback),
/// saves a record and shares it by email; the invitee gets the email, signs up with a passkey,
/// signs in through the app's popup, finds the invitation, accepts it and reads the record. Two
/// headless Chromiums driven by Tests/Browser/newcomer_flow.py (its docstring lists every check).
@Suite struct NewcomerScenarioTests {
    static var driver: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Browser/newcomer_flow.py").path
    }

    @Test(.timeLimit(.minutes(3)))
    func aNewcomerSharesARecordByEmailAndAPasskeyInviteeAcceptsIt() throws {
        let sink = try SMTPSink()
        let server = try TestServer(extraArguments: TestServer.cheapHash + ["--smtp-url", "smtp://127.0.0.1:\(sink.port)",
                                                                            "--smtp-from", "trips@tandem.example"])
        let owner = "\(unique("owner"))@example.com".lowercased()
        let invitee = "\(unique("invitee"))@example.com".lowercased()
        let run = try LandingPageBrowserTests.python([
            Self.driver, "--server", server.baseURL, "--container", TestServer.container, "--tandem", TestServer.binary,
            "--data", server.dataDirectory, "--mail-dir", sink.directory, "--owner", owner, "--invitee", invitee,
        ], timeout: 150)
        #expect(run.status == 0, "newcomer_flow.py exited \(run.status)\n--- stdout\n\(run.output)\n--- stderr\n\(run.errors)")

        // Behind what the people saw: one sign-in method each, of the kind they chose, and the
        // invitee's place in the share is accepted.
        func methods(_ email: String) throws -> String {
            // One line per method (SQLite's group_concat is not PostgreSQL's).
            try server.sqlite("SELECT kind FROM sign_in_methods JOIN users ON users.record_name = sign_in_methods.user_record_name WHERE users.email = '\(email)' ORDER BY kind")
        }
        #expect(try methods(owner) == "password")
        #expect(try methods(invitee) == "passkey")
        #expect(try server.sqlite("SELECT status FROM share_participants WHERE email = '\(invitee)'") == "ACCEPTED")
    }
}
