import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// A share's page in the console (decisions C17): a server administrator acts for the owner
/// through the owner's forms and the same services, and each action is logged with the
/// administrator's account.
@Suite struct ConsoleSharePageTests {
    @Test func anAdministratorInvitesForTheOwnerAndTheActionIsLoggedWithTheirAccount() throws {
        let browser = try ConsoleTests.admin()
        let server = browser.server
        let owner = try server.person("owner"), invitee = try server.person("invitee")
        let note = try server.shareNote(owner: owner)
        let list = try browser.get("/console/containers/\(TestServer.container)/shares/development")
        #expect(list.text.contains("href=\"/console/shares/\(note.guid)\""), "the console's share list links to the share's console page")

        let page = try browser.get("/console/shares/\(note.guid)")
        #expect(page.status == 200 && page.text.contains(#"id="acting""#) && page.text.contains(owner.email), "\(page.text)")
        #expect(page.text.contains("action=\"/console/shares/\(note.guid)/invite\""), "the forms post to the console")
        #expect(!page.text.contains(#"id="signout""#) && !page.text.contains("/share/\(note.guid)/invite"))

        let refused = try browser.post("/console/shares/\(note.guid)/invite", ["email": "nobody", "permission": "READ_ONLY"])
        #expect(refused.status == 400 && refused.text.contains(#"id="field-email-error""#), "\(refused.text)")
        let sent = try browser.post("/console/shares/\(note.guid)/invite", ["email": invitee.email, "permission": "READ_WRITE"])
        #expect(sent.status == 303 && sent.headers["location"] == "/console/shares/\(note.guid)?done=invite", "\(sent.status) \(sent.text)")
        #expect(try SharePageTests.participants(server, note)[invitee.email] == "USER READ_WRITE INVITED")
        // The log is written by its own thread, a moment after the answer.
        var log = "", line: Substring?
        for _ in 0..<150 where line == nil {
            log = server.standardError?.value ?? ""
            line = log.split(separator: "\n").first { $0.contains("did invite on share \(note.guid)") }
            if line == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        #expect(line?.contains("console: administrator root@example.com") == true && line?.contains(owner.recordName) == true, "\(log.suffix(2000))")

        #expect(try browser.post("/console/shares/\(note.guid)/accept", [:]).status == 404, "only the owner's forms are sent from the console")
        #expect(try browser.post("/console/shares/\(note.guid)/invite", ["email": invitee.email, "permission": "READ_ONLY", "csrf": "0"]).status == 403)
        #expect(try browser.get("/console/shares/\(String(repeating: "a", count: 26))").status == 404)
    }
}
