import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP

/// Issue 8 scenarios 2 and 3: a Tandem share URL as a collaboration highlight with notices and
/// mentions; membership sync prompts when the group changes.
@Suite("SharedWithYou collaboration")
struct CollaborationScenarioTests {
    /// A registered app of the container (share URLs surface to the container's apps, W4).
    static func anyApp(_ server: TestServer) throws -> String {
        let (app, domain) = appNames()
        try server.registerApp(app, domain: domain)
        return app
    }

    static func shareURL(_ server: TestServer, _ note: SharedNote) -> String { "\(server.baseURL)/share/\(note.guid)" }

    static func notices(_ server: TestServer, _ person: Person, _ collaboration: String) throws -> [JSONValue] {
        try server.tandemGet("highlights/notices/list", ["collaboration": collaboration], as: person).json["notices"]?.arrayValue ?? []
    }

    /// `share:` identifiers and share URLs belong to Tandem shares (W4): a participant who knows
    /// the share's GUID cannot start a custom collaboration under its identifier or URL first
    /// and so capture it.
    @Test func customCollaborationCannotTakeAShareIdentifier() throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let app = try Self.anyApp(server)
        try server.addContacts(cat, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE"), Invite.email(cat)])
        let identifier = "share:\(note.guid)"
        let bobs = try server.conversation(bob, with: [cat])
        let squat = try server.tandem("conversations/messages/send", [
            "conversation": .string(bobs), "text": "mine",
            "collaboration": ["collaborationIdentifier": .string(identifier), "url": "https://evil.example.org/doc", "title": "Groceries"],
        ], as: bob)
        #expect(squat.status == 400)
        #expect(squat.json.serverErrorCode == "BAD_REQUEST")
        #expect(try server.tandemGet("conversations/messages/list", ["conversation": bobs], as: bob).json["events"]?.arrayValue?
            .contains { $0["text"] == "mine" } == false)

        let url = Self.shareURL(server, note)
        // Nor under another identifier with the share's URL.
        let byURL = try server.tandem("conversations/messages/send", [
            "conversation": .string(bobs), "text": "mine too",
            "collaboration": ["collaborationIdentifier": .string(unique("bobs-doc")), "url": .string(url)],
        ], as: bob)
        #expect(byURL.status == 400)
        #expect(byURL.json.serverErrorCode == "BAD_REQUEST")
        let group = try server.conversation(ada, with: [bob, cat])
        try server.say("our list \(url)", in: group, as: ada)
        let forCat = try server.highlights(cat, app: app)
        #expect(forCat.urls == [url])
        #expect(forCat.json.first?["collaboration"]?["collaborationIdentifier"] == .string(identifier))
        #expect(forCat.json.first?["collaboration"]?["kind"] == "share")
    }

    @Test("A collaboration identifier belongs to one container environment: the same one can be used in another")
    func collaborationIdentifiersAreScopedToTheirEnvironment() throws {
        let server = try Shared.server
        let (ada, bob) = (try server.person("ada"), try server.person("bob"))
        let identifier = unique("doc")
        func send(_ environment: String, as person: Person, to other: Person) throws -> TestServer.Response {
            let base = "\(server.baseURL)/tandem/1/\(TestServer.container)/\(environment)"
            let created = try server.request("POST", "\(base)/conversations/create", body: Data(JSONWriter.bytes(["members": [.string(other.recordName)]])),
                                             token: .some(person.token))
            let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
            let body: JSONValue = ["conversation": .string(conversation), "text": "doc",
                                   "collaboration": ["collaborationIdentifier": .string(identifier), "url": .string("https://docs.example.org/\(environment)/\(identifier)")]]
            return try server.request("POST", "\(base)/conversations/messages/send", body: Data(JSONWriter.bytes(body)), token: .some(person.token))
        }
        // Bob takes the identifier in production first; Ada can still use it in development, and
        // Bob cannot take it again where Ada holds it.
        #expect(try send("production", as: bob, to: ada).status == 200)
        #expect(try send("development", as: ada, to: bob).status == 200)
        let again = try send("development", as: bob, to: ada)
        #expect(again.status == 400, "\(again.text)")
    }

    @Test func shareURLBecomesCollaborationHighlightWithNotices() throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let app = try Self.anyApp(server)
        try server.addContacts(bob, [ada])
        try server.addContacts(cat, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE"), Invite.email(cat)])
        let group = try server.conversation(ada, with: [bob, cat])
        let url = Self.shareURL(server, note)
        try server.say("our list \(url)", in: group, as: ada)

        let forBob = try server.highlights(bob, app: app)
        #expect(forBob.urls == [url])
        let collaboration = forBob.json.first?["collaboration"]
        let identifier = "share:\(note.guid)"
        #expect(collaboration?["collaborationIdentifier"] == .string(identifier))
        #expect(collaboration?["title"] == "Groceries")
        #expect(collaboration?["contentType"] == "com.apple.cloudkit.share")
        #expect(collaboration?["creationDate"]?.int64Value ?? 0 > 0)
        // The owner sees the collaboration she started (D23), so she sees its notices.
        #expect(try server.highlights(ada, app: app).urls == [url])
        #expect(try server.tandemGet("highlights/lookup", ["app": app, "collaboration": identifier], as: bob).json["url"] == .string(url))

        // The owner edits and renames: notices reach the conversation with the actor.
        for (event, trigger) in [("change", JSONValue.string("edit")), ("persistence", .int(3))] {
            let posted = try server.tandem("highlights/notices/post", ["collaborationIdentifier": .string(identifier), "event": .string(event),
                                                                        "trigger": trigger], as: ada)
            #expect(posted.status == 200, "\(posted.text)")
        }
        let bobNotices = try Self.notices(server, bob, identifier)
        #expect(bobNotices.compactMap { $0["notice"]?["triggerName"]?.stringValue } == ["edit", "renamed"])
        #expect(bobNotices.allSatisfy { $0["actor"] == .string(ada.recordName) && $0["conversationID"] == .string(group) })
        let history = try server.tandemGet("conversations/messages/list", ["conversation": group], as: cat)
        #expect(history.json["events"]?.arrayValue?.filter { $0["kind"] == "notice" }.count == 2)

        // A mention (by share participant handle) reaches only the mentioned user.
        let mention = try server.tandem("highlights/notices/post", ["url": .string(url), "event": "mention", "mentionedHandle": .string(cat.email)], as: bob)
        #expect(mention.status == 200, "\(mention.text)")
        #expect(try Self.notices(server, cat, identifier).contains { $0["notice"]?["event"] == "mention" })
        #expect(!(try Self.notices(server, bob, identifier)).contains { $0["notice"]?["event"] == "mention" })
        #expect(!(try Self.notices(server, ada, identifier)).contains { $0["notice"]?["event"] == "mention" })
        let adaHistory = try server.tandemGet("conversations/messages/list", ["conversation": group], as: ada)
        #expect(adaHistory.json["events"]?.arrayValue?.filter { $0["kind"] == "notice" }.count == 2)

        // clearNotices empties the caller's list only.
        #expect(try server.tandem("highlights/notices/clear", ["collaborationIdentifier": .string(identifier)], as: bob).status == 200)
        #expect(try Self.notices(server, bob, identifier).isEmpty)
        #expect(try Self.notices(server, cat, identifier).count == 3)

        // The share's own participant change posts a membership notice by itself.
        let dan = try server.person("dan")
        let added = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                                                 extra: ["participants": [Invite.email(bob, "READ_WRITE"), Invite.email(cat), Invite.email(dan)]])])
        #expect(added.status == 200 && added.json.record(0).serverErrorCode == nil, "\(added.text)")
        let membership = try Self.notices(server, bob, identifier)
        #expect(membership.count == 1)
        #expect(membership.first?["notice"]?["triggerName"] == "addedCollaborator")
        #expect(membership.first?["actor"] == .string(ada.recordName))
    }

    /// W14: a share's URL pasted into a conversation of strangers brings them none of its
    /// notices (nor its title), and lets none of them post one; a conversation where one of the
    /// share's people pasted it hears them.
    @Test func aShareURLPastedAmongStrangersBringsThemNoNotices() throws {
        let server = try Shared.server
        let (ada, bob, eve, mal) = (try server.person("ada"), try server.person("bob"), try server.person("eve"), try server.person("mal"))
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let url = Self.shareURL(server, note)
        let identifier = "share:\(note.guid)"
        let owners = try server.conversation(ada, with: [bob])
        try server.say("our list \(url)", in: owners, as: ada)
        let strangers = try server.conversation(eve, with: [mal])
        try server.say("look \(url)", in: strangers, as: eve)
        let withBob = try server.conversation(bob, with: [eve])
        try server.say("ours \(url)", in: withBob, as: bob)

        let posted = try server.tandem("highlights/notices/post", ["collaborationIdentifier": .string(identifier), "event": "change", "trigger": "edit"], as: ada)
        #expect(posted.status == 200, "\(posted.text)")
        let dan = try server.person("dan")
        let added = try server.ownerModify(note, [Body.operation("update", name: "share", recordType: nil, tag: note.shareTag,
                                                                 extra: ["participants": [Invite.email(bob, "READ_WRITE"), Invite.email(dan)]])])
        #expect(added.status == 200 && added.json.record(0).serverErrorCode == nil, "\(added.text)")

        func noticeEvents(_ conversation: String, as person: Person) throws -> [JSONValue] {
            try server.tandemGet("conversations/messages/list", ["conversation": conversation], as: person).json["events"]?.arrayValue?
                .filter { $0["kind"] == "notice" } ?? []
        }
        #expect(try noticeEvents(strangers, as: mal).isEmpty)
        #expect(try Self.notices(server, mal, identifier).isEmpty)
        #expect(try noticeEvents(owners, as: bob).count == 2)
        #expect(try noticeEvents(withBob, as: eve).count == 2, "one of the share's people pasted it there")

        // Being in a conversation that shared the URL does not make Eve one who may post.
        let squat = try server.tandem("highlights/notices/post", ["url": .string(url), "event": "change", "trigger": "edit"], as: eve)
        #expect(squat.status == 404, "\(squat.text)")
        #expect(try noticeEvents(owners, as: bob).count == 2)
    }

    /// W15: what counts is who SENT the URL. Eve makes a group with Bob (one of the share's
    /// people, who consented to nothing), Mal and even Ada, and pastes Ada's share URL: Mal gets
    /// no notice, no highlight with its title, and Eve's membership changes prompt Ada for
    /// nothing. Once Bob sends the URL there himself, the group hears the share as any other.
    /// A notice's poster learns only of their own conversations.
    @Test func aStrangerCannotLendAShareToAConversationByPuttingOneOfItsPeopleInIt() throws {
        let server = try Shared.server
        let (ada, bob, eve, mal, dan, cat) = (try server.person("ada"), try server.person("bob"), try server.person("eve"), try server.person("mal"),
                                              try server.person("dan"), try server.person("cat"))
        let app = try Self.anyApp(server)
        try server.addContacts(mal, [eve, bob])
        try server.addContacts(bob, [ada])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let url = Self.shareURL(server, note)
        let identifier = "share:\(note.guid)"
        let owners = try server.conversation(ada, with: [bob])
        try server.say("our list \(url)", in: owners, as: ada)
        let adaAndCat = try server.conversation(ada, with: [cat])
        try server.say("have a look \(url)", in: adaAndCat, as: ada)
        let eves = try server.conversation(eve, with: [bob, mal, ada], group: true)
        try server.say("look \(url)", in: eves, as: eve)

        func noticeEvents(_ conversation: String, as person: Person) throws -> [JSONValue] {
            try server.tandemGet("conversations/messages/list", ["conversation": conversation], as: person).json["events"]?.arrayValue?
                .filter { $0["kind"] == "notice" } ?? []
        }
        func prompts() throws -> [JSONValue] { try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue ?? [] }
        /// Posts an edit notice as `person`; the conversations its reply lists.
        func edit(as person: Person) throws -> Set<String> {
            let posted = try server.tandem("highlights/notices/post", ["collaborationIdentifier": .string(identifier), "event": "change",
                                                                        "trigger": "edit"], as: person)
            #expect(posted.status == 200, "\(posted.text)")
            return Set(posted.json["notices"]?.arrayValue?.compactMap { $0["conversationID"]?.stringValue } ?? [])
        }

        #expect(try edit(as: ada) == [owners, adaAndCat], "Eve's group is not reached")
        #expect(try noticeEvents(eves, as: mal).isEmpty)
        #expect(try Self.notices(server, mal, identifier).isEmpty)
        #expect(try server.highlights(mal, app: app).urls.isEmpty, "no highlight, so no title or owner")
        #expect(try server.tandemGet("highlights/lookup", ["app": app, "collaboration": identifier], as: mal).status == 404)
        #expect(try server.highlights(bob, app: app).urls == [url], "one of the share's people sees it as before")
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(eves), "member": .string(dan.email)], as: eve).status == 200)
        #expect(try prompts().isEmpty, "Eve's paste does not make Ada's share one of the group's")

        // Bob sends it there himself: now it is his choice, and the group hears the share.
        try server.say("this one \(url)", in: eves, as: bob)
        #expect(try edit(as: bob) == [owners, eves], "Bob's reply lists his conversations only, not Ada's with Cat")
        #expect(try noticeEvents(eves, as: mal).count == 1)
        let forMal = try server.highlights(mal, app: app)
        #expect(forMal.urls == [url])
        #expect(forMal.json.first?["collaboration"]?["title"] == "Groceries")
        #expect(try server.tandem("conversations/members/remove", ["conversation": .string(eves), "member": .string(dan.recordName)],
                                  as: eve).status == 200)
        #expect(try prompts().isEmpty, "Dan was never on the share: there is nothing to remove him from")
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(eves), "member": .string(dan.email)], as: eve).status == 200)
        let prompt = try #require(try prompts().first, "Ada is in the group, and one of the share's people sent it there")
        #expect(prompt["message"] == "Add Dan to your shared document")
    }

    /// W16: only an owner who is in the conversation is asked (Messages shows the banner to
    /// the owner, in the group), a prompt never carries a person's email address, and public
    /// shares never prompt (their people join by URL, so accepting could do nothing).
    /// Before, Bob forwarding Ada's share to his own group sent Ada "Add kim@… to your shared
    /// document" for each change there, and a stranger who had opened a public share could
    /// send its owner prompt after prompt.
    @Test func onlyAnOwnerInTheConversationIsPromptedAndNeverWithAnEmailAddress() throws {
        let server = try Shared.server
        let (ada, bob, eve, mal) = (try server.person("ada"), try server.person("bob"), try server.person("eve"), try server.person("mal"))
        let kimEmail = "\(unique("kim").lowercased())@example.com"
        _ = try TestServer.admin(["user", "add", "--email", kimEmail, "--data", server.dataDirectory])
        func prompts() throws -> [JSONValue] { try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue ?? [] }
        func churn(_ conversation: String, as person: Person) throws {
            #expect(try server.tandem("conversations/members/add", ["conversation": .string(conversation), "member": .string(kimEmail)],
                                      as: person).status == 200)
            #expect(try server.tandem("conversations/members/remove", ["conversation": .string(conversation), "member": .string(kimEmail)],
                                      as: person).status == 200)
        }

        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let bobs = try server.conversation(bob, with: [mal], group: true)
        try server.say("Ada's list \(Self.shareURL(server, note))", in: bobs, as: bob)
        try churn(bobs, as: bob)
        #expect(try prompts().isEmpty, "Ada is not in Bob's group")

        let open = try server.shareNote(owner: ada, publicPermission: "READ_ONLY")
        let eves = try server.conversation(eve, with: [ada, mal], group: true)
        try server.say("public \(Self.shareURL(server, open))", in: eves, as: ada)
        try churn(eves, as: eve)
        #expect(try prompts().isEmpty, "a public share never prompts")

        let withAda = try server.conversation(ada, with: [bob, mal], group: true)
        try server.say("\(Self.shareURL(server, note))", in: withAda, as: ada)
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(withAda), "member": .string(kimEmail)],
                                  as: bob).status == 200)
        let add = try #require(try prompts().first)
        #expect(add["message"] == "Add the new member to your shared document")
        // Accepted, Kim is invited to the share; leaving the group then asks to remove her.
        #expect(try server.tandem("collaborations/prompts/respond", ["promptID": add["promptID"]!, "accept": true], as: ada).status == 200)
        #expect(try server.tandem("conversations/members/remove", ["conversation": .string(withAda), "member": .string(kimEmail)],
                                  as: bob).status == 200)
        let messages = try prompts().compactMap { $0["message"]?.stringValue }
        #expect(messages.contains("Remove the member who left from your shared document"), "\(messages)")
        #expect(!messages.joined().contains("@"))
    }

    /// W17: a share is one collaboration whatever form of its URL was sent (another query, the
    /// server under another name), and a stopped share leaves every highlight list at once.
    @Test func everyFormOfAShareURLIsOneCollaborationAndAStoppedShareLeavesTheHighlights() async throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let app = try Self.anyApp(server)
        try server.addContacts(bob, [ada])
        try server.addContacts(cat, [bob])
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob, "READ_WRITE")])
        let url = Self.shareURL(server, note)
        try server.say("ours \(url)", in: try server.conversation(ada, with: [bob]), as: ada)
        let other = url.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        #expect(other != url)
        let bobAndCat = try server.conversation(bob, with: [cat])
        try server.say("see \(other)?ref=chat", in: bobAndCat, as: bob)
        let forCat = try server.highlights(cat, app: app)
        #expect(forCat.urls == [url], "filed under the collaboration's URL: \(forCat.urls)")
        #expect(forCat.json.first?["collaboration"]?["title"] == "Groceries")
        #expect(try server.tandem("highlights/notices/post", ["collaborationIdentifier": .string("share:\(note.guid)"), "event": "change",
                                                              "trigger": "edit"], as: ada).status == 200)
        #expect(try Self.notices(server, cat, "share:\(note.guid)").count == 1)

        let probe = try await StreamProbe.connect(server, as: cat)
        #expect(await probe.wait { $0.hasHello })
        _ = await probe.client.send(text: JSONWriter.string(["type": "highlights.subscribe", "app": .string(app)]))
        #expect(await probe.wait { $0.all("highlights").last?["highlights"]?.arrayValue?.count == 1 })
        let stopped = try server.ownerModify(note, [Body.operation("forceDelete", name: "share", recordType: nil, tag: nil)])
        #expect(stopped.status == 200 && stopped.json.record(0).serverErrorCode == nil, "\(stopped.text)")
        #expect(await probe.wait { $0.all("highlights").last?["highlights"]?.arrayValue?.isEmpty == true },
                "a fresh snapshot without the stopped share")
        #expect(try server.highlights(cat, app: app).urls.isEmpty)
        #expect(try server.highlights(bob, app: app).urls.isEmpty)
    }

    /// An identifier holding U+0000 on the stream got no answer at all (the store refused the
    /// text and the failure was only logged); now it is an `error` envelope like any other bad
    /// identifier, and the connection goes on.
    @Test func aStreamIdentifierWithNULGetsAnError() async throws {
        let server = try Shared.server
        let probe = try await StreamProbe.connect(server, as: try server.person("ada"))
        #expect(await probe.wait { $0.hasHello })
        _ = await probe.client.send(text: #"{"type":"presence.watch","collaborationIdentifier":"share:a\u0000b"}"#)
        #expect(await probe.wait { $0.all("error").count == 1 })
        _ = await probe.client.send(text: #"{"type":"highlights.subscribe","app":"a\u0000b"}"#)
        #expect(await probe.wait { $0.all("error").count == 2 })
        _ = await probe.client.send(text: #"{"type":"ping"}"#)
        #expect(await probe.wait { $0.has("pong") })
    }

    struct NoticeRefusal: Sendable, CustomStringConvertible {
        var description: String
        var body: @Sendable (_ identifier: String) -> JSONValue
        var status: Int
        var asStranger = false
    }

    static let noticeRefusals: [NoticeRefusal] = [
        NoticeRefusal(description: "unknown collaboration", body: { _ in ["collaborationIdentifier": "nope", "event": "change", "trigger": 1] }, status: 404),
        NoticeRefusal(description: "a stranger posts", body: { ["collaborationIdentifier": .string($0), "event": "change", "trigger": 1] },
                      status: 404, asStranger: true),
        NoticeRefusal(description: "trigger out of range", body: { ["collaborationIdentifier": .string($0), "event": "change", "trigger": 3] }, status: 400),
        NoticeRefusal(description: "trigger name of another event", body: { ["collaborationIdentifier": .string($0), "event": "membership", "trigger": "edit"] },
                      status: 400),
        NoticeRefusal(description: "unknown event", body: { ["collaborationIdentifier": .string($0), "event": "poke", "trigger": 1] }, status: 400),
        NoticeRefusal(description: "mention without a person", body: { ["collaborationIdentifier": .string($0), "event": "mention"] }, status: 400),
        NoticeRefusal(description: "mention of someone outside", body: { ["collaborationIdentifier": .string($0), "event": "mention",
                                                                         "mentionedHandle": "ada@example.com"] }, status: 404),
        NoticeRefusal(description: "identity not base64", body: { ["collaborationIdentifier": .string($0), "event": "mention",
                                                                  "mentionedIdentity": "%%%"] }, status: 400),
    ]

    @Test(arguments: noticeRefusals)
    func noticeRefusalsPostNothing(_ refusal: NoticeRefusal) throws {
        let server = try Shared.server
        let (ada, bob, eve) = (try server.person("ada"), try server.person("bob"), try server.person("eve"))
        let note = try server.shareNote(owner: ada, participants: [Invite.email(bob)])
        let direct = try server.conversation(ada, with: [bob])
        try server.say(Self.shareURL(server, note), in: direct, as: ada)
        let identifier = "share:\(note.guid)"
        let response = try server.tandem("highlights/notices/post", refusal.body(identifier), as: refusal.asStranger ? eve : ada)
        #expect(response.status == refusal.status, "\(response.text)")
        #expect(response.json.serverErrorCode != nil)
        #expect(try Self.notices(server, bob, identifier).isEmpty)
    }

    @Test func membershipSyncPromptsTheOwnerOnceAndAppliesOnAccept() async throws {
        let server = try Shared.server
        let (ada, bob, cat, dan) = (try server.person("ada"), try server.person("bob"), try server.person("cat"), try server.person("dan"))
        let groceries = try server.shareNote(owner: ada, participants: [Invite.email(bob), Invite.email(cat)])
        let chores = try server.shareNote(owner: ada, participants: [Invite.email(bob), Invite.email(cat)])
        let group = try server.conversation(ada, with: [bob, cat])
        try server.say("\(Self.shareURL(server, groceries)) and \(Self.shareURL(server, chores))", in: group, as: ada)
        let probe = try await StreamProbe.connect(server, as: ada)
        #expect(await probe.wait { $0.hasHello })

        // Dan joins: ONE prompt to the owner naming both documents.
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(group), "member": .string(dan.email)], as: bob).status == 200)
        let pending = try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue ?? []
        #expect(pending.count == 1)
        let prompt = try #require(pending.first)
        #expect(prompt["message"] == "Add Dan to your 2 shared documents")
        #expect(prompt["change"] == "add")
        #expect(Set(prompt["collaborations"]?.arrayValue?.compactMap { $0["collaborationIdentifier"]?.stringValue } ?? [])
                == ["share:\(groceries.guid)", "share:\(chores.guid)"])
        #expect(await probe.wait { $0.has("collaboration.prompt") })
        #expect(try server.tandemGet("collaborations/prompts/list", as: bob).json["prompts"]?.arrayValue?.isEmpty == true)

        // Accepting invites Dan to both shares; he can accept them.
        let accepted = try server.tandem("collaborations/prompts/respond", ["promptID": prompt["promptID"]!, "accept": true], as: ada)
        #expect(accepted.status == 200, "\(accepted.text)")
        #expect(accepted.json["prompt"]?["state"] == "accepted")
        for note in [groceries, chores] {
            let result = try server.accept(note, as: dan)
            #expect(result["participantStatus"] == "ACCEPTED", "\(result)")
        }
        let again = try server.tandem("collaborations/prompts/respond", ["promptID": prompt["promptID"]!, "accept": true], as: ada)
        #expect(again.status == 409)
        // The conversation heard about it.
        let notices = try Self.notices(server, bob, "share:\(groceries.guid)")
        #expect(notices.contains { $0["notice"]?["triggerName"] == "addedCollaborator" })

        // Cat leaves: the mirror prompt; accepting removes her.
        #expect(try server.tandem("conversations/members/remove", ["conversation": .string(group), "member": .string(cat.recordName)], as: cat).status == 200)
        let removal = try #require(try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue?.first)
        #expect(removal["message"] == "Remove Cat from your 2 shared documents")
        #expect(try server.tandem("collaborations/prompts/respond", ["promptID": removal["promptID"]!, "accept": true], as: ada).status == 200)
        #expect(try server.resolve(groceries, as: cat).json["results"]?.arrayValue?.first?.serverErrorCode == "NOT_FOUND")

        // Bob leaves; the owner declines: Bob stays a participant.
        #expect(try server.tandem("conversations/members/remove", ["conversation": .string(group), "member": .string(bob.recordName)], as: ada).status == 200)
        let bobPrompt = try #require(try server.tandemGet("collaborations/prompts/list", as: ada).json["prompts"]?.arrayValue?.first)
        #expect(try server.tandem("collaborations/prompts/respond", ["promptID": bobPrompt["promptID"]!, "accept": false], as: ada).json["prompt"]?["state"] == "declined")
        #expect(try server.accept(groceries, as: bob)["participantStatus"] == "ACCEPTED")
        // Someone else's prompt is not found.
        #expect(try server.tandem("collaborations/prompts/respond", ["promptID": bobPrompt["promptID"]!, "accept": true], as: bob).status == 404)
        probe.client.close()
    }
}
