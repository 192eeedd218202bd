import Testing
import TandemCore
import TandemStore

/// Collaborations, notices and membership prompts through `any Store` (decisions P5, P33):
/// collaborations by id, URL and URL list, the ones shared in a conversation, the notices a
/// viewer sees after their clear mark (in timeline order, P4), and prompts by owner and state.
@Suite struct CollaborationConformanceTests {
    static let (ann, ben, cat) = (ConversationConformanceTests.ann, ConversationConformanceTests.ben, ConversationConformanceTests.cat)
    static let dan = "_" + String(repeating: "d", count: 32)
    /// A URL that needs quoting in a list (`"`, `\`, `,`, a space).
    static let awkwardURL = #"https://example.com/a"b\c,d e"#

    static func collaboration(_ id: String, url: String, environment: Environment = .development, kind: StoredCollaboration.Kind = .custom,
                              title: String? = nil, at time: Int64 = 2_000) -> StoredCollaboration {
        StoredCollaboration(id: id, container: Fixture.container, environment: environment, url: url, owner: ann, kind: kind, title: title,
                            contentType: "public.plain-text", createdAt: time, shareGUID: kind == .share ? "guid-" + id : nil)
    }

    @Test(arguments: StoreBackend.all(for: .collaboration))
    func collaborationsAreFoundByIDURLAndURLList(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let share = Self.collaboration("share:abc", url: "https://tandem.example/share/abc", kind: .share, title: "Trip")
            let custom = Self.collaboration("doc-1", url: Self.awkwardURL)
            let production = Self.collaboration("doc-1", url: "https://example.com/prod", environment: .production)
            try store.write { tx in
                try tx.putCollaboration(share)
                try tx.putCollaboration(custom)
                try tx.putCollaboration(production)
                // Existing ones stay as they are: the same id with another URL, the same URL with another id.
                try tx.putCollaboration(Self.collaboration("doc-1", url: "https://example.com/other", title: "Changed"))
                try tx.putCollaboration(Self.collaboration("doc-2", url: Self.awkwardURL, title: "Changed"))
            }
            try store.read { reader throws -> Void in
                #expect(try reader.collaboration(id: "share:abc", container: Fixture.container, environment: .development) == share)
                #expect(try reader.collaboration(id: "doc-1", container: Fixture.container, environment: .development) == custom)
                #expect(try reader.collaboration(id: "doc-1", container: Fixture.container, environment: .production) == production)
                #expect(try reader.collaboration(id: "doc-2", container: Fixture.container, environment: .development) == nil)
                #expect(try reader.collaboration(url: Self.awkwardURL, container: Fixture.container, environment: .development) == custom)
                #expect(try reader.collaboration(url: "https://example.com/other", container: Fixture.container, environment: .development) == nil)
                #expect(try reader.collaboration(url: Self.awkwardURL, container: "iCloud.other", environment: .development) == nil)
                let urls = [share.url, Self.awkwardURL, "https://example.com/prod", "https://absent.example/"]
                #expect(try reader.collaborations(urls: urls, container: Fixture.container, environment: .development)
                    == [share.url: share, Self.awkwardURL: custom])
                #expect(try reader.collaborations(urls: [], container: Fixture.container, environment: .development).isEmpty)
            }
        }
    }

    /// A renamed share's collaboration takes its new title and type (R4, R6); only that
    /// collaboration, in its environment, changes, and an unknown one changes nothing.
    @Test(arguments: StoreBackend.all(for: .collaboration))
    func collaborationMetadataFollowsARename(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let share = Self.collaboration("share:abc", url: "https://tandem.example/share/abc", kind: .share, title: "Trip")
            let production = Self.collaboration("share:abc", url: "https://tandem.example/share/abc", environment: .production, kind: .share,
                                                title: "Trip")
            try store.write { tx in
                try tx.putCollaboration(share)
                try tx.putCollaboration(production)
                try tx.setCollaborationMetadata(id: "share:abc", container: Fixture.container, environment: .development, title: "Trip in May",
                                                contentType: "com.example.trip")
                try tx.setCollaborationMetadata(id: "share:absent", container: Fixture.container, environment: .development, title: "x",
                                                contentType: "x")
            }
            var renamed = share
            renamed.title = "Trip in May"
            renamed.contentType = "com.example.trip"
            try store.read { reader throws -> Void in
                #expect(try reader.collaboration(id: "share:abc", container: Fixture.container, environment: .development) == renamed)
                #expect(try reader.collaboration(id: "share:abc", container: Fixture.container, environment: .production) == production)
                #expect(try reader.collaboration(id: "share:absent", container: Fixture.container, environment: .development) == nil)
            }
            try store.write { tx in
                try tx.setCollaborationMetadata(id: "share:abc", container: Fixture.container, environment: .development, title: nil,
                                                contentType: "com.apple.cloudkit.share")
            }
            #expect(try store.read { try $0.collaboration(id: "share:abc", container: Fixture.container, environment: .development) }?.title == nil)
        }
    }

    @Test(arguments: StoreBackend.all(for: .collaboration))
    func theCollaborationsSharedInAConversationFollowTheTimeline(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            let first = Self.collaboration("doc-1", url: "https://example.com/1")
            let second = Self.collaboration("doc-2", url: "https://example.com/2")
            try store.write { tx in
                try tx.insertConversation(StoredConversation(id: "conv-1", container: Fixture.container, environment: .development,
                                                             isGroup: false, title: nil, createdBy: Self.ann, createdAt: 1_000,
                                                             members: [Self.ann, Self.ben]))
                try tx.putCollaboration(first)
                try tx.putCollaboration(second)
                try tx.putCollaboration(Self.collaboration("doc-3", url: "https://example.com/3", environment: .production))
                try tx.putConversationLink(conversation: "conv-1", url: "https://example.com/1", seq: 5, sender: Self.ann)
                try tx.putConversationLink(conversation: "conv-1", url: "https://example.com/2", seq: 3, sender: Self.ann)
                // A link that is not a collaboration here, and one whose collaboration is in another environment.
                try tx.putConversationLink(conversation: "conv-1", url: "https://example.com/plain", seq: 4, sender: Self.ann)
                try tx.putConversationLink(conversation: "conv-1", url: "https://example.com/3", seq: 6, sender: Self.ann)
            }
            #expect(try store.read { try $0.collaborationsShared(conversation: "conv-1") } == [second, first])
            #expect(try store.read { try $0.collaborationsShared(conversation: "conv-absent") }.isEmpty)
        }
    }

    /// One viewer's notices of `doc-1` after the clears they made (event IDs, in timeline order).
    struct NoticeCase: Sendable, CustomTestStringConvertible {
        var viewer: String
        var name: String
        /// Events whose `seq` the viewer clears through, in this order.
        var clears: [String] = []
        var environment: Environment = .development
        var expected: [String]
        var testDescription: String { name }

        /// The timeline: `n1` (everyone) 1 100, `m1` a message, `n-ben` (to Ben only) 1 150,
        /// `n-other` (another collaboration) 1 160; Cat joins at 1 200; `n2` (everyone) 1 300. Ann
        /// cleared through `n-ben` before each case.
        static let all = [
            NoticeCase(viewer: CollaborationConformanceTests.ann, name: "a member sees notices to everyone after their mark", expected: ["n2"]),
            NoticeCase(viewer: CollaborationConformanceTests.ben, name: "and those addressed to them; another viewer's mark is not theirs", expected: ["n1", "n-ben", "n2"]),
            NoticeCase(viewer: CollaborationConformanceTests.cat, name: "from their joining on", expected: ["n2"]),
            NoticeCase(viewer: CollaborationConformanceTests.dan, name: "nothing for a non-member", expected: []),
            NoticeCase(viewer: CollaborationConformanceTests.ben, name: "nothing in another environment", environment: .production, expected: []),
            NoticeCase(viewer: CollaborationConformanceTests.ben, name: "after the clear mark", clears: ["n1"], expected: ["n-ben", "n2"]),
            NoticeCase(viewer: CollaborationConformanceTests.ben, name: "a clear mark only moves forward", clears: ["n-ben", "n1"], expected: ["n2"]),
            NoticeCase(viewer: CollaborationConformanceTests.ben, name: "cleared through the last", clears: ["n2"], expected: []),
        ]
    }

    @Test(arguments: StoreBackend.all(for: .collaboration), NoticeCase.all)
    func noticesFollowTheTimelineAfterTheViewersClearMark(backend: StoreBackend, notice: NoticeCase) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            @Sendable func event(_ id: String, _ kind: StoredConversationEvent.Kind, subject: String? = nil, collaboration: String? = "doc-1",
                                 at time: Int64) -> StoredConversationEvent {
                StoredConversationEvent(conversationID: "conv-1", eventID: id, kind: kind, actor: Self.ann, subject: subject,
                                        collaborationID: kind == .notice ? collaboration : nil, body: Array(#"{"n":"\#(id)"}"#.utf8),
                                        createdAt: time)
            }
            let sequences = try store.write { tx -> [String: Int64] in
                try tx.insertConversation(StoredConversation(id: "conv-1", container: Fixture.container, environment: .development,
                                                             isGroup: true, title: nil, createdBy: Self.ann, createdAt: 1_000,
                                                             members: [Self.ann, Self.ben]))
                var sequences: [String: Int64] = [:]
                sequences["n1"] = try tx.appendEvent(event("n1", .notice, at: 1_100))
                sequences["m1"] = try tx.appendEvent(event("m1", .message, at: 1_120))
                sequences["n-ben"] = try tx.appendEvent(event("n-ben", .notice, subject: Self.ben, at: 1_150))
                sequences["n-other"] = try tx.appendEvent(event("n-other", .notice, collaboration: "doc-2", at: 1_160))
                try tx.addMember(conversation: "conv-1", user: Self.cat, at: 1_200)
                sequences["n2"] = try tx.appendEvent(event("n2", .notice, at: 1_300))
                // Ann's clear never moves Ben's mark.
                try tx.clearNotices(viewer: Self.ann, collaboration: "doc-1", container: Fixture.container, environment: .development,
                                    through: sequences["n-ben"]!)
                return sequences
            }
            for cleared in notice.clears {
                try store.write { tx in
                    try tx.clearNotices(viewer: notice.viewer, collaboration: "doc-1", container: Fixture.container,
                                        environment: .development, through: sequences[cleared]!)
                }
            }
            let seen = try store.read {
                try $0.notices(viewer: notice.viewer, collaboration: "doc-1", container: Fixture.container, environment: notice.environment)
            }
            #expect(seen.map(\.eventID) == notice.expected)
            #expect(seen.map(\.seq) == notice.expected.map { sequences[$0]! })
            #expect(seen.allSatisfy { $0.kind == .notice && $0.collaborationID == "doc-1" && $0.conversationID == "conv-1" })
        }
    }

    @Test(arguments: StoreBackend.all(for: .collaboration))
    func promptsAreListedByOwnerAndStateOldestFirst(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            @Sendable func prompt(_ id: String, owner: String = Self.ann, state: StoredMembershipPrompt.State = .pending,
                                  collaborations: [String] = ["doc-1", "doc-2"], environment: Environment = .development,
                                  at time: Int64) -> StoredMembershipPrompt {
                StoredMembershipPrompt(id: id, container: Fixture.container, environment: environment, owner: owner, conversationID: "conv-1",
                                       person: Self.cat, change: id.hasSuffix("r") ? .remove : .add, collaborations: collaborations,
                                       state: state, createdAt: time)
            }
            let late = prompt("p-late", at: 3_000)
            let early = prompt("p-early-r", collaborations: ["share:abc"], at: 1_000)
            let declined = prompt("p-declined", state: .declined, collaborations: [], at: 2_000)
            let tie = prompt("p-a-tie", at: 3_000)
            try store.write { tx in
                for each in [late, early, declined, tie] { try tx.putPrompt(each) }
                try tx.putPrompt(prompt("p-ben", owner: Self.ben, at: 500))
                try tx.putPrompt(prompt("p-prod", environment: .production, at: 500))
            }
            try store.read { reader throws -> Void in
                let all = try reader.prompts(owner: Self.ann, container: Fixture.container, environment: .development, state: nil)
                #expect(all == [early, declined, tie, late], "oldest first, then by id")
                #expect(try reader.prompts(owner: Self.ann, container: Fixture.container, environment: .development, state: .pending)
                    .map(\.id) == ["p-early-r", "p-a-tie", "p-late"])
                #expect(try reader.prompts(owner: Self.ann, container: Fixture.container, environment: .development, state: .accepted).isEmpty)
                #expect(try reader.prompt(id: "p-declined") == declined)
                #expect(try reader.prompt(id: "p-absent") == nil)
            }
            // Putting a prompt again changes its state only.
            let answered = prompt("p-late", state: .accepted, collaborations: ["doc-9"], at: 9_000)
            try store.write { tx in try tx.putPrompt(answered) }
            var expected = late
            expected.state = .accepted
            #expect(try store.read { try $0.prompt(id: "p-late") } == expected)
        }
    }
}
