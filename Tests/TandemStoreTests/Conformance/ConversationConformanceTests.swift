import Testing
import TandemCore
import TandemStore

/// Conversations through `any Store` (decisions P5): members, a timeline a member sees only
/// from their latest joining on, shared links per viewer, pins and contacts.
@Suite struct ConversationConformanceTests {
    static let (ann, ben, cat) = ("_" + String(repeating: "a", count: 32), "_" + String(repeating: "b", count: 32),
                                  "_" + String(repeating: "c", count: 32))

    static func event(_ id: String, _ kind: StoredConversationEvent.Kind, actor: String, subject: String? = nil,
                      at time: Int64) -> StoredConversationEvent {
        StoredConversationEvent(conversationID: "conv-1", eventID: id, kind: kind, actor: actor, subject: subject,
                                body: Array(#"{"text":"\#(id)"}"#.utf8), createdAt: time)
    }

    @Test(arguments: StoreBackend.all(for: .conversations))
    func membersSeeTheTimelineFromTheirLatestJoiningOn(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let conversation = StoredConversation(id: "conv-1", container: Fixture.container, environment: .development, isGroup: true,
                                                  title: "Trip", createdBy: Self.ann, createdAt: 1_000, members: [Self.ann, Self.ben])
            let sequences = try store.write { tx -> [Int64] in
                try tx.insertConversation(conversation)
                let first = try tx.appendEvent(Self.event("m1", .message, actor: Self.ann, at: 1_100))
                try tx.addMember(conversation: "conv-1", user: Self.cat, at: 1_200)
                let added = try tx.appendEvent(Self.event("add-cat", .memberAdded, actor: Self.ann, subject: Self.cat, at: 1_200))
                let second = try tx.appendEvent(Self.event("m2", .message, actor: Self.ben, at: 1_300))
                return [first, added, second]
            }
            #expect(sequences == sequences.sorted() && Set(sequences).count == 3, "timeline positions increase")
            let stored = try #require(try store.read { try $0.conversation(id: "conv-1") })
            #expect(stored.title == "Trip")
            #expect(Set(stored.members) == [Self.ann, Self.ben, Self.cat])
            #expect(try store.read { try $0.isMember(conversation: "conv-1", user: Self.cat) })
            #expect(try store.read { try $0.conversations(user: Self.ben, container: Fixture.container, environment: .development) }
                .map(\.id) == ["conv-1"])
            let annSees = try store.read { try $0.conversationEvents(conversation: "conv-1", viewer: Self.ann, after: 0, limit: 10) }
            #expect(annSees.map(\.eventID) == ["m1", "add-cat", "m2"])
            #expect(annSees.map(\.seq) == sequences)
            let catSees = try store.read { try $0.conversationEvents(conversation: "conv-1", viewer: Self.cat, after: 0, limit: 10) }
            #expect(!catSees.map(\.eventID).contains("m1"), "nothing from before they were added")
            #expect(catSees.map(\.eventID).contains("m2"))
            #expect(try store.read { try $0.conversationEvents(conversation: "conv-1", viewer: Self.ann, after: sequences[1], limit: 10) }
                .map(\.eventID) == ["m2"])
            try store.write { tx in try tx.removeMember(conversation: "conv-1", user: Self.cat) }
            #expect(try !store.read { try $0.isMember(conversation: "conv-1", user: Self.cat) })
        }
    }

    @Test(arguments: StoreBackend.all(for: .conversations))
    func sharedLinksPinsAndContacts(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let conversation = StoredConversation(id: "conv-1", container: Fixture.container, environment: .development, isGroup: false,
                                                  title: nil, createdBy: Self.ann, createdAt: 1_000, members: [Self.ann, Self.ben])
            @Sendable func link(_ url: String, host: String, event: String, at time: Int64) -> StoredSharedLink {
                StoredSharedLink(viewer: Self.ben, container: Fixture.container, environment: .development, url: url, conversationID: "conv-1",
                                 host: host, sender: Self.ann, eventID: event, sentAt: time, title: nil)
            }
            try store.write { tx in
                try tx.insertConversation(conversation)
                try tx.putSharedLink(link("https://docs.example.com/a", host: "docs.example.com", event: "e1", at: 2_000))
                try tx.putSharedLink(link("https://other.org/b", host: "other.org", event: "e2", at: 2_100))
                // An older message sharing the same URL does not replace the newer row.
                try tx.putSharedLink(link("https://docs.example.com/a", host: "docs.example.com", event: "e0", at: 1_500))
                try tx.putConversationLink(conversation: "conv-1", url: "https://docs.example.com/a", seq: 1, sender: Self.ann)
                // The same URL again from another member, then from the first: two senders, one row each (W15).
                try tx.putConversationLink(conversation: "conv-1", url: "https://docs.example.com/a", seq: 2, sender: Self.ben)
                try tx.putConversationLink(conversation: "conv-1", url: "https://docs.example.com/a", seq: 3, sender: Self.ann)
                try tx.setPin(viewer: Self.ben, conversation: "conv-1", url: "https://other.org/b", pinned: true, at: 2_200)
                try tx.putContact(owner: Self.ben, StoredContact(handle: "ann@example.com", userRecordName: Self.ann))
            }
            try store.read { reader throws -> Void in
                let all = try reader.sharedLinks(viewer: Self.ben, container: Fixture.container, environment: .development, hosts: nil, suffixes: nil)
                #expect(Set(all.map(\.url)) == ["https://docs.example.com/a", "https://other.org/b"])
                #expect(all.first { $0.url == "https://docs.example.com/a" }?.eventID == "e1")
                let bySuffix = try reader.sharedLinks(viewer: Self.ben, container: Fixture.container, environment: .development,
                                                      hosts: nil, suffixes: [".example.com"])
                #expect(bySuffix.map(\.url) == ["https://docs.example.com/a"])
                let byHost = try reader.sharedLinks(viewer: Self.ben, container: Fixture.container, environment: .development,
                                                    hosts: ["other.org"], suffixes: nil)
                #expect(byHost.map(\.url) == ["https://other.org/b"])
                #expect(try reader.sharedLinks(viewer: Self.ann, container: Fixture.container, environment: .development, hosts: nil, suffixes: nil).isEmpty)
                #expect(try reader.conversationsSharing(url: "https://docs.example.com/a") == ["conv-1"])
                #expect(try reader.links(conversation: "conv-1") == ["https://docs.example.com/a"])
                #expect(try reader.linkSenders(conversation: "conv-1", url: "https://docs.example.com/a") == [Self.ann, Self.ben].sorted())
                #expect(try reader.linkSenders(conversation: "conv-1", url: "https://other.org/b").isEmpty, "a link row alone names no sender")
                #expect(try reader.linkSenders(conversation: "conv-2", url: "https://docs.example.com/a").isEmpty)
                #expect(try reader.pins(viewer: Self.ben).map(\.url) == ["https://other.org/b"])
                #expect(try reader.contacts(owner: Self.ben) == [StoredContact(handle: "ann@example.com", userRecordName: Self.ann)])
                let co = try reader.coMembers(viewer: Self.ben, container: Fixture.container, environment: .development)
                #expect(co.contains { $0.conversation == "conv-1" && $0.member == Self.ann && !$0.isGroup })
            }
            #expect(try store.write { try $0.removeContact(owner: Self.ben, handle: "ann@example.com") })
            #expect(try !store.write { try $0.removeContact(owner: Self.ben, handle: "ann@example.com") })
            try store.write { tx in try tx.setPin(viewer: Self.ben, conversation: "conv-1", url: "https://other.org/b", pinned: false, at: 2_300) }
            #expect(try store.read { try $0.pins(viewer: Self.ben) }.isEmpty)
        }
    }
}
