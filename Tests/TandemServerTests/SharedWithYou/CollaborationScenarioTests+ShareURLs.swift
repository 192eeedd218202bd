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

    /// W19: Bob, a participant, is the only one of the share's people who sent its URL into his
    /// conversation with Cat. When the owner removes him, when he declines, when he leaves,
    /// Cat's highlight goes at once: a fresh stream snapshot, and no list cached from before.
    @Test func aParticipantWhoGoesTakesTheHighlightFromHisConversationsAtOnce() async throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let app = try Self.anyApp(server)
        try server.addContacts(cat, [bob])
        let bobAndCat = try server.conversation(bob, with: [cat])
        let probe = try await StreamProbe.connect(server, as: cat)
        #expect(await probe.wait { $0.hasHello })
        _ = await probe.client.send(text: JSONWriter.string(["type": "highlights.subscribe", "app": .string(app)]))
        #expect(await probe.wait { $0.all("highlights").count == 1 })
        func count() -> Int? { probe.all("highlights").last?["highlights"]?.arrayValue?.count }

        /// Bob sends the note's URL to Cat; `goes` makes him no longer one of its people.
        func check(_ how: String, _ note: SharedNote, goes: () throws -> Void) async throws {
            try server.say("see \(Self.shareURL(server, note))", in: bobAndCat, as: bob)
            #expect(await probe.wait { _ in count() == 1 }, "\(how): Cat has the highlight")
            #expect(try server.highlights(cat, app: app).urls.count == 1, "\(how)")
            try goes()
            #expect(try server.highlights(cat, app: app).urls.isEmpty, "\(how): no list cached from before")
            #expect(await probe.wait { _ in count() == 0 }, "\(how): a fresh snapshot without it")
        }

        let removed = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        try await check("removed", removed) {
            let edited = try server.ownerModify(removed, [Body.operation("update", name: "share", recordType: nil, tag: removed.shareTag,
                                                                         extra: ["participants": []])])
            #expect(edited.status == 200 && edited.json.record(0).serverErrorCode == nil, "\(edited.text)")
        }
        let declined = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        try await check("declined", declined) {
            let answer = try server.tandem("shares/declineInvitation", ["shortGUIDs": [["value": .string(declined.guid)]]], as: bob)
            #expect(answer.json["results"]?.arrayValue?.first?["status"] == "DECLINED", "\(answer.text)")
        }
        let left = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        #expect(try server.accept(left, as: bob)["participantStatus"] == "ACCEPTED")
        try await check("left", left) {
            let leaving = try server.sharedModify(left, [Body.operation("forceDelete", name: "share", recordType: nil, tag: nil)], as: bob)
            #expect(leaving.status == 200 && leaving.json.record(0).serverErrorCode == nil, "\(leaving.text)")
        }
        probe.client.close()
    }

    /// W20: another form of a share's URL (the server under another name, a query, a
    /// fragment) finds its collaboration on every route taking a URL, as in messages (W17).
    @Test func everyRouteTakingAURLKnowsAShareByAnyForm() throws {
        let server = try Shared.server
        let (ada, bob) = (try server.person("ada"), try server.person("bob"))
        let app = try Self.anyApp(server)
        try server.addContacts(bob, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let url = Self.shareURL(server, note)
        let direct = try server.conversation(ada, with: [bob])
        try server.say("ours \(url)", in: direct, as: ada)
        let other = url.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "?ref=chat#top"

        let found = try server.tandemGet("highlights/lookup", ["app": app, "url": other], as: bob)
        #expect(found.status == 200 && found.json["url"] == .string(url), "\(found.text)")
        let slashed = try server.tandemGet("highlights/lookup", ["app": app, "url": url + "/"], as: bob)
        #expect(slashed.status == 200 && slashed.json["url"] == .string(url), "a trailing slash: \(slashed.text)")
        let posted = try server.tandem("highlights/notices/post", ["url": .string(other), "event": "change", "trigger": "edit"], as: ada)
        #expect(posted.status == 200 && posted.json["notices"]?.arrayValue?.count == 1, "\(posted.text)")
        #expect(try Self.notices(server, bob, "share:\(note.guid)").count == 1)
        let pinned = try server.tandem("conversations/pins/modify", ["conversation": .string(direct), "url": .string(other), "pinned": true], as: bob)
        #expect(pinned.status == 200, "\(pinned.text)")
        let hidden = try server.tandem("highlights/hide", ["url": .string(other)], as: bob)
        #expect(hidden.status == 200, "\(hidden.text)")
        #expect(try server.highlights(bob, app: app).urls.isEmpty, "the share's highlight is the one hidden")
    }

    /// W21: a conversation identifier on the stream holding U+0000, or 200,000 characters long,
    /// is a `BAD_REQUEST` reply (it was `INTERNAL_ERROR`, or silently declared), and the
    /// connection goes on.
    @Test(arguments: ["holding U+0000", "200,000 characters long", "empty"])
    func aBadConversationIdentifierOnTheStreamIsABadRequest(_ kind: String) async throws {
        let id = switch kind {
        case "empty": ""
        case "holding U+0000": "a\u{0}b"
        default: String(repeating: "c", count: 200_000)
        }
        let server = try Shared.server
        let probe = try await StreamProbe.connect(server, as: try server.person("ada"))
        #expect(await probe.wait { $0.hasHello })
        for type in ["conversation.activate", "groupState", "conversation.deactivate"] {
            let reply = try await SessionProtocolTests.reply(probe, ["type": .string(type), "conversationID": .string(id)])
            #expect(reply["error"]?["serverErrorCode"] == "BAD_REQUEST", "\(type): \(String(describing: reply["error"]))")
            #expect(reply["result"] == nil)
        }
        // The same identifier as a person to stage an activity with (the fourth review: a NUL
        // there was INTERNAL_ERROR).
        let staged = try await SessionProtocolTests.reply(probe, ["type": "activity.stage", "people": [.string(id)],
                                                                  "activity": ["identifier": "com.example.draw", "metadata": ["title": "x"]]])
        #expect(staged["error"]?["serverErrorCode"] == "BAD_REQUEST", "activity.stage: \(String(describing: staged["error"]))")
        let state = try await SessionProtocolTests.reply(probe, ["type": "groupState"])
        #expect(state["result"]?["reason"] == "noActiveConversation", "nothing was declared: \(state)")
        probe.client.close()
    }
}
