import Foundation
import Testing
import TandemCore
import TandemTestSupport

/// The console for an account that is not a server administrator (issue 18: "a console session
/// of a non-admin account sees only what that account may see"; decisions C50–C51), over real
/// HTTP: container names and its own data, shares and sessions; the administrators' pages
/// refused with a way to sign out; other people's data out of reach whatever the URL or form says.
@Suite struct ConsoleMemberTests {
    static let data = "/console/containers/\(TestServer.container)/data/development"

    @Test func aMemberSeesContainerNamesAndNoAdministratorsPage() throws {
        let server = try ConsoleTests.server
        let (person, console) = try server.consoleMember("member")
        let home = try console.get("/console/")
        #expect(home.status == 200 && home.text.contains("id=\"member-note\"") && home.text.contains(">\(TestServer.container)</a>"), "\(home.text)")
        #expect(!home.text.contains("id=\"create-container\"") && !home.text.contains("id=\"nav-users\"") && home.text.contains("id=\"nav-account\""))
        let container = try console.get("/console/containers/\(TestServer.container)")
        #expect(container.status == 200 && container.text.contains("id=\"data-development\""), "\(container.text)")
        #expect(!container.text.contains("api-tokens") && !container.text.contains("server-keys") && !container.text.contains("schema-development"))

        for path in ["/console/users", "/console/users/\(person.recordName)", "/console/users/\(server.userRecordName)/remove", "/console/logs",
                     "/console/metrics", "/console/containers/\(TestServer.container)/schema/development"] {
            let refused = try console.get(path)
            #expect(refused.status == 403 && refused.text.contains("id=\"problem\"") && refused.text.contains("action=\"/console/signout\""),
                    "\(path): \(refused.status) \(refused.text.prefix(400))")
        }
        let json = try console.get("/console/metrics.json")
        #expect(json.status == 403 && json.json.serverErrorCode == "ACCESS_DENIED")
        let id = "iCloud.com.example.\(unique("member"))"
        #expect(try console.post("/console/containers", ["id": id]).status == 403)
        #expect(try console.post("/console/containers/\(TestServer.container)/tokens", ["origins": "https://member.example"]).status == 403)
        #expect(try server.sqlite("SELECT count(*) FROM containers WHERE id = '\(id)'") == "0")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE origins = 'https://member.example'") == "0")

        // Signing out works for any console session, with its CSRF field.
        let hash = ConsoleTests.sha256Hex(console.cookies["tandem_console"] ?? "")
        #expect(try console.post("/console/signout", ["csrf": ""]).status == 403)
        let out = try console.post("/console/signout")
        #expect(out.status == 303 && out.headers["location"] == "/console/signin?done=signed-out")
        #expect(try server.sqlite("SELECT revoked_at IS NOT NULL FROM console_sessions WHERE hash = X'\(hash)'") == "1")
    }

    @Test func theDataBrowserActsOnlyAsTheMember() throws {
        let server = try ConsoleTests.server
        let (person, console) = try server.consoleMember("writer")
        let name = unique("mine")
        let saved = try console.post(Self.data + "/record", ["database": "private", "name": name, "type": "Note", "rows": "1",
                                                             "name0": "title", "type0": "STRING", "value0": "member's"])
        #expect(saved.status == 303, "\(saved.status) \(saved.text)")
        let stored = try server.post("records/lookup", Body.lookup([name]), as: person, database: "private").json.record(0)
        #expect(stored["fields"]?["title"]?["value"] == "member's", "\(stored)")
        let page = try console.get(Self.data + "?database=private&type=Note")
        #expect(page.status == 200 && page.text.contains(">\(name)</a>") && page.text.contains("id=\"acting-as\"") && !page.text.contains("name=\"user\""),
                "\(page.text)")
        let own = try console.get(Self.data + "?database=private&type=Note&user=\(person.email.replacingOccurrences(of: "@", with: "%40"))")
        #expect(own.status == 200 && own.text.contains(">\(name)</a>"))
        let recordPage = try console.get(Self.data + "/record?database=private&name=\(name)")
        #expect(recordPage.status == 200 && recordPage.text.contains("member&#39;s") && !recordPage.text.contains("href=\"/console/users/"),
                "no links to the administrators' user pages: \(recordPage.text)")

        // Another account's data, named in the URL or a form field: refused, nothing read or written.
        let adas = unique("adas")
        try server.create(adas, fields: ["title": Body.field("Ada's secret")])
        for user in ["ada%40example.com", server.userRecordName, "nobody%40example.com"] {
            let read = try console.get(Self.data + "?database=private&type=Note&user=\(user)")
            #expect(read.status == 403 && !read.text.contains(adas), "\(user): \(read.status) \(read.text.prefix(300))")
            let record = try console.get(Self.data + "/record?database=private&user=\(user)&name=\(adas)")
            #expect(record.status == 403 && !record.text.contains("Ada's secret"))
        }
        let other = unique("other")
        #expect(try console.post(Self.data + "/record", ["database": "private", "user": "ada@example.com", "name": other, "type": "Note", "rows": "1",
                                                         "name0": "title", "type0": "STRING", "value0": "planted"]).status == 403)
        #expect(try server.sqlite("SELECT count(*) FROM records WHERE name = '\(other)'") == "0")
        let tag = try ConsoleDataTests.lookup(server, adas, zone: "_defaultZone")["recordChangeTag"]?.stringValue ?? ""
        #expect(try console.post(Self.data + "/record/delete", ["database": "private", "user": "ada@example.com", "name": adas, "tag": tag]).status == 403)
        #expect(try server.sqlite("SELECT count(*) FROM records WHERE name = '\(adas)'") == "1")
        // Ada's zone through the member's own shared database: the records service finds no such zone.
        let shared = try console.get(Self.data + "?database=shared&owner=ada%40example.com&zone=_defaultZone&type=Note")
        #expect(shared.status != 200 && !shared.text.contains(adas), "\(shared.status)")
    }

    @Test func aMemberSeesAndManagesOnlyTheSharesItOwns() throws {
        let server = try ConsoleTests.server
        let (person, console) = try server.consoleMember("sharer")
        let mine = try server.shareNote(owner: person)
        let theirs = try server.shareNote(owner: try server.person("stranger"))
        let list = try console.get("/console/containers/\(TestServer.container)/shares/development")
        #expect(list.status == 200 && list.text.contains(mine.guid) && !list.text.contains(theirs.guid), "\(list.text)")
        let page = try console.get("/console/shares/\(mine.guid)")
        #expect(page.status == 200 && page.text.contains("Console: your share."), "\(page.text.prefix(600))")
        #expect(try console.get("/console/shares/\(theirs.guid)").status == 404)

        let invited = "\(unique("guest").lowercased())@example.com"
        let invite = try console.post("/console/shares/\(mine.guid)/invite", ["email": invited, "permission": "READ_ONLY"])
        #expect(invite.status == 303, "\(invite.status) \(invite.text.prefix(400))")
        #expect(try server.sqlite("SELECT count(*) FROM share_participants WHERE email = '\(invited)'") == "1")
        let planted = "\(unique("guest").lowercased())@example.com"
        #expect(try console.post("/console/shares/\(theirs.guid)/invite", ["email": planted, "permission": "READ_WRITE"]).status == 404)
        #expect(try server.sqlite("SELECT count(*) FROM share_participants WHERE email = '\(planted)'") == "0")
    }

    @Test func theAccountPageRevokesOnlyTheMembersOwnSessions() throws {
        let server = try ConsoleTests.server
        let (person, console) = try server.consoleMember("sessions")
        let other = try server.person("other")
        let mineID = String(ConsoleTests.sha256Hex(person.token).prefix(16)).lowercased()
        let theirsID = String(ConsoleTests.sha256Hex(other.token).prefix(16)).lowercased()
        let page = try console.get("/console/account")
        #expect(page.status == 200 && page.text.contains("revoke-session-\(mineID)") && page.text.contains(person.email), "\(page.text)")
        #expect(!page.text.contains(theirsID))

        let refused = try console.post("/console/account/sessions/revoke", ["session": theirsID])
        #expect(refused.status == 404, "\(refused.status)")
        #expect(try server.sqlite("SELECT count(*) FROM tokens WHERE user_record_name = '\(other.recordName)' AND revoked_at IS NOT NULL") == "0")
        let revoked = try console.post("/console/account/sessions/revoke", ["session": mineID])
        #expect(revoked.status == 303 && revoked.headers["location"] == "/console/account?done=sessions-revoked")
        #expect(try server.post("records/lookup", Body.lookup(["x"]), as: person, database: "private").status == 401)
        #expect(try console.get("/console/account?done=sessions-revoked").text.contains("Sessions revoked."))
    }
}
