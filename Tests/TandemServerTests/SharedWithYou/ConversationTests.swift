import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP

/// Conversations (the Messages role): members, messages with links, history, stream events,
/// and the refusals.
@Suite("SharedWithYou conversations")
struct ConversationTests {
    @Test func groupConversationMembershipAndMessagesReachTheStream() async throws {
        let server = try Shared.server
        let (ada, bob, cat, dan) = (try server.person("ada"), try server.person("bob"), try server.person("cat"), try server.person("dan"))
        let probe = try await StreamProbe.connect(server, as: bob)
        #expect(await probe.wait { $0.hasHello })
        let id = try server.conversation(ada, with: [bob, cat], title: "Trip")
        let lookup = try server.tandemGet("conversations/lookup", ["conversation": id], as: cat)
        #expect(lookup.json["isGroup"] == true)
        #expect(Set(lookup.json["members"]?.arrayValue?.compactMap(\.stringValue) ?? []) == [ada.recordName, bob.recordName, cat.recordName])

        let sent = try server.say("look https://example.org/a, and (https://example.org/b).", in: id, as: ada,
                                  links: [["url": "https://Example.org/c", "title": "C", "imageURL": "https://example.org/c.png"]])
        let links = sent.json["links"]?.arrayValue ?? []
        #expect(links.compactMap { $0["url"]?.stringValue } == ["https://example.org/a", "https://example.org/b", "https://example.org/c"])
        #expect(links[2]["title"] == "C")

        let added = try server.tandem("conversations/members/add", ["conversation": .string(id), "member": .string(dan.email)], as: bob)
        #expect(added.status == 200)
        #expect(added.json["kind"] == "memberAdded")
        #expect(added.json["member"] == .string(dan.recordName))
        let left = try server.tandem("conversations/members/remove", ["conversation": .string(id), "member": .string(cat.recordName)], as: cat)
        #expect(left.json["kind"] == "memberRemoved")

        // Bob's stream saw the conversation, the message and both membership events, in order.
        #expect(await probe.wait { probe in
            probe.envelopes.withLock { $0.filter { $0["type"] == "conversation.event" }.count } >= 5
        })
        let kinds = probe.envelopes.withLock { $0.filter { $0["type"] == "conversation.event" }.compactMap { $0["event"]?["kind"]?.stringValue } }
        #expect(kinds == ["memberAdded", "memberAdded", "message", "memberAdded", "memberRemoved"])
        #expect(probe.has("conversation.created"))

        // History pages by marker: 5 events, 2 per page.
        var marker = "0"
        var seen: [String] = []
        for _ in 0..<5 {
            let page = try server.tandemGet("conversations/messages/list", ["conversation": id, "continuationMarker": marker, "resultsLimit": "2"], as: ada)
            #expect(page.status == 200)
            seen += page.json["events"]?.arrayValue?.compactMap { $0["kind"]?.stringValue } ?? []
            marker = page.json["continuationMarker"]?.stringValue ?? marker
            if page.json["moreComing"] != true { break }
        }
        #expect(seen == kinds)
        // Cat left: the conversation is gone for her.
        #expect(try server.tandemGet("conversations/lookup", ["conversation": id], as: cat).status == 404)
        probe.client.close()
    }

    @Test func oneToOneConversationsHaveFixedMembers() throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let id = try server.conversation(ada, with: [bob])
        #expect(try server.tandemGet("conversations/lookup", ["conversation": id], as: bob).json["isGroup"] == false)
        let add = try server.tandem("conversations/members/add", ["conversation": .string(id), "member": .string(cat.recordName)], as: ada)
        #expect(add.status == 400)
        #expect(add.json.serverErrorCode == "BAD_REQUEST")
        let list = try server.tandemGet("conversations/list", as: bob)
        #expect(list.json["conversations"]?.arrayValue?.contains { $0["conversationID"] == .string(id) } == true)
    }

    /// W3: a member reads the conversation from when they joined; someone removed and added again
    /// reads from their return, not what was said while they were out.
    @Test func newMembersDoNotReadEarlierHistory() throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let id = try server.conversation(ada, with: [bob], group: true)
        try server.say("before cat", in: id, as: ada)
        Thread.sleep(forTimeInterval: 0.005)
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(id), "member": .string(cat.recordName)], as: ada).status == 200)
        try server.say("with cat", in: id, as: bob)
        #expect(try server.tandem("conversations/members/remove", ["conversation": .string(id), "member": .string(cat.recordName)], as: ada).status == 200)
        try server.say("cat is out", in: id, as: ada)
        Thread.sleep(forTimeInterval: 0.005)
        #expect(try server.tandem("conversations/members/add", ["conversation": .string(id), "member": .string(cat.recordName)], as: bob).status == 200)
        try server.say("cat is back", in: id, as: bob)

        func texts(_ person: Person) throws -> [String] {
            try server.tandemGet("conversations/messages/list", ["conversation": id], as: person).json["events"]?.arrayValue?
                .compactMap { $0["text"]?.stringValue } ?? []
        }
        #expect(try texts(ada) == ["before cat", "with cat", "cat is out", "cat is back"])
        #expect(try texts(cat) == ["cat is back"])
    }

    /// W1: a conversation lives in one container and environment; another environment's path
    /// does not reach it (no lookup, history, sending, members or pins), and nothing is written.
    @Test func conversationsStayInTheirEnvironment() throws {
        let server = try Shared.server
        let (ada, bob, cat) = (try server.person("ada"), try server.person("bob"), try server.person("cat"))
        let id = try server.conversation(ada, with: [bob, cat], group: true)
        try server.say("hello https://example.org/env", in: id, as: ada)
        let production = "\(server.baseURL)/tandem/1/\(TestServer.container)/production"
        func post(_ operation: String, _ body: JSONValue) throws -> TestServer.Response {
            try server.request("POST", "\(production)/\(operation)", body: Data(JSONWriter.bytes(body)), token: .some(ada.token))
        }
        let attempts = [
            try server.request("GET", "\(production)/conversations/lookup?conversation=\(id)", token: .some(ada.token)),
            try server.request("GET", "\(production)/conversations/messages/list?conversation=\(id)", token: .some(ada.token)),
            try post("conversations/messages/send", ["conversation": .string(id), "text": "from production"]),
            try post("conversations/members/remove", ["conversation": .string(id), "member": .string(cat.recordName)]),
            try post("conversations/pins/modify", ["conversation": .string(id), "url": "https://example.org/env"]),
        ]
        for response in attempts {
            #expect(response.status == 404)
            #expect(response.json.serverErrorCode == "NOT_FOUND")
        }
        let history = try server.tandemGet("conversations/messages/list", ["conversation": id], as: ada)
        #expect(history.json["events"]?.arrayValue?.contains { $0["text"] == "from production" } == false)
        let lookup = try server.tandemGet("conversations/lookup", ["conversation": id], as: ada)
        #expect(lookup.json["members"]?.arrayValue?.count == 3)
    }

    struct Refusal: Sendable, CustomStringConvertible {
        var description: String
        var operation: String
        var body: @Sendable (_ conversation: String, _ member: String) -> JSONValue
        var status: Int
        var code: String
        var asStranger = false
    }

    static let refusals: [Refusal] = [
        Refusal(description: "a stranger posts", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "hi"] }, status: 404, code: "NOT_FOUND", asStranger: true),
        Refusal(description: "a stranger adds a member", operation: "conversations/members/add",
                body: { ["conversation": .string($0), "member": .string($1)] }, status: 404, code: "NOT_FOUND", asStranger: true),
        Refusal(description: "unknown conversation", operation: "conversations/messages/send",
                body: { _, _ in ["conversation": "nope", "text": "hi"] }, status: 404, code: "NOT_FOUND"),
        Refusal(description: "empty message", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": ""] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "text is not a string", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": 5] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "attached link is not a URL", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "links": [["url": "ftp://x"]]] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "too many links", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "links": .array((0..<21).map { ["url": .string("https://x.org/\($0)")] })] },
                status: 413, code: "LIMIT_EXCEEDED"),
        Refusal(description: "unknown share mode", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "https://x.org/share/abc", "shareMode": "invite"] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "collaborate with a permission not READ_ONLY or READ_WRITE", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "https://x.org/share/abc", "shareMode": "collaborate", "permission": "NONE"] },
                status: 400, code: "BAD_REQUEST"),
        Refusal(description: "a permission without collaborate", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "hi", "permission": "READ_ONLY"] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "collaborate without a share URL", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "https://x.org/a", "shareMode": "collaborate"] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "collaborate on a share URL naming no share", operation: "conversations/messages/send",
                body: { c, _ in ["conversation": .string(c), "text": "https://x.org/share/nosuchshare", "shareMode": "collaborate"] },
                status: 403, code: "ACCESS_DENIED"),
        Refusal(description: "unknown member", operation: "conversations/members/add",
                body: { c, _ in ["conversation": .string(c), "member": "nobody@example.com"] }, status: 404, code: "NOT_FOUND"),
        Refusal(description: "member twice", operation: "conversations/members/add",
                body: { c, m in ["conversation": .string(c), "member": .string(m)] }, status: 409, code: "EXISTS"),
        Refusal(description: "no members", operation: "conversations/create",
                body: { _, _ in ["members": []] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "1:1 with two", operation: "conversations/create",
                body: { _, m in ["members": [.string(m), "ada@example.com"], "group": false] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "pin a URL never shared", operation: "conversations/pins/modify",
                body: { c, _ in ["conversation": .string(c), "url": "https://never.example/x"] }, status: 404, code: "NOT_FOUND"),
        Refusal(description: "consent scope unknown", operation: "conversations/consent/modify",
                body: { _, _ in ["scope": "everything", "allowed": false] }, status: 400, code: "BAD_REQUEST"),
        Refusal(description: "consent for a conversation not mine", operation: "conversations/consent/modify",
                body: { _, _ in ["scope": "conversation", "target": "nope", "allowed": false] }, status: 404, code: "NOT_FOUND"),
    ]

    @Test(arguments: refusals)
    func refusalsLeaveNothingBehind(_ refusal: Refusal) throws {
        let server = try Shared.server
        let (ada, bob, eve) = (try server.person("ada"), try server.person("bob"), try server.person("eve"))
        let id = try server.conversation(ada, with: [bob], group: true)
        let response = try server.tandem(refusal.operation, refusal.body(id, bob.recordName), as: refusal.asStranger ? eve : ada)
        #expect(response.status == refusal.status, "\(response.text)")
        #expect(response.json.serverErrorCode == refusal.code)
        let history = try server.tandemGet("conversations/messages/list", ["conversation": id], as: ada)
        #expect(history.json["events"]?.arrayValue?.count == 1)  // bob's memberAdded only
    }

    @Test func signedOutAndMalformedRequestsAreRefused() throws {
        let server = try Shared.server
        let ada = try server.person("ada")
        let anonymous = try server.request("POST", "\(server.tandemBase)/conversations/create", body: Data(#"{"members":[]}"#.utf8), token: .some(nil))
        #expect(anonymous.status == 401 || anonymous.status == 421)
        let malformed = try server.request("POST", "\(server.tandemBase)/conversations/create", body: Data("{".utf8), token: .some(ada.token))
        #expect(malformed.status == 400)
        #expect(malformed.json.serverErrorCode == "BAD_REQUEST")
    }
}
