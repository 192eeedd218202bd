import Foundation
import Testing
import TandemCore
import TandemHTTP

/// Issue 23's fourth review: which URL a share's collaboration shows (W18), highlights that
/// leave with a participant (W19), other forms of a share's URL on every route (W20), and
/// conversation identifiers on the stream (W21).
extension CollaborationScenarioTests {
    /// W18: Eve, a stranger, sends Ada's share URL under her own host before anyone else. The
    /// collaboration's URL is not hers: Ada's and Bob's highlights, the rename notice and Ada's
    /// membership prompt show the server's form. (Before, the first sender's form won, and
    /// every one of them read `https://evil.example/share/…`.)
    @Test func aStrangersFormOfAShareURLIsNeverTheOneShown() throws {
        let server = try Shared.server
        let (ada, bob, eve, mal, dan) = (try server.person("ada"), try server.person("bob"), try server.person("eve"), try server.person("mal"),
                                         try server.person("dan"))
        let app = try Self.anyApp(server)
        try server.addContacts(bob, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let url = Self.shareURL(server, note)
        let identifier = "share:\(note.guid)"
        try server.say("look https://evil.example/share/\(note.guid)", in: try server.conversation(eve, with: [mal]), as: eve)
        let group = try server.conversation(ada, with: [bob], group: true)
        try server.say("ours \(url)", in: group, as: ada)

        #expect(try server.highlights(ada, app: app).urls == [url])
        #expect(try server.highlights(bob, app: app).urls == [url])
        let renamed = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                                                   fields: ["cloudkit.title": Body.field("Shopping")])])
        #expect(renamed.status == 200 && renamed.json.record(0).serverErrorCode == nil, "\(renamed.text)")
        let notices = try Self.notices(server, bob, identifier)
        #expect(notices.contains { $0["notice"]?["triggerName"] == "renamed" }, "\(notices)")
        #expect(!notices.isEmpty && notices.allSatisfy { $0["notice"]?["url"] == .string(url) }, "\(notices)")
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(group), "member": .string(dan.email)], as: bob).status == 200)
        let prompt = try #require(try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue?.first)
        #expect(prompt["collaborations"]?.arrayValue?.compactMap { $0["url"]?.stringValue } == [url], "\(prompt)")
    }

    /// W18 with `--public-url`: the collaboration shows the server's own URL for the share,
    /// whoever sent which form first, and every form is filed under it.
    @Test func withAPublicURLAShareShowsTheServersOwnURL() throws {
        let server = try TestServer(extraArguments: ["--public-url", "https://tandem.example"])
        let (ada, bob, eve, mal) = (try server.person("ada"), try server.person("bob"), try server.person("eve"), try server.person("mal"))
        let app = try Self.anyApp(server)
        try server.addContacts(bob, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let canonical = "https://tandem.example/share/\(note.guid)"
        try server.say("look https://evil.example/share/\(note.guid)?x=1", in: try server.conversation(eve, with: [mal]), as: eve)
        try server.say("ours \(Self.shareURL(server, note))", in: try server.conversation(ada, with: [bob]), as: ada)
        #expect(try server.highlights(bob, app: app).urls == [canonical])
        #expect(try server.highlights(ada, app: app).urls == [canonical])
    }
}
