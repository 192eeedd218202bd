import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// Collaboration presence and group-session eligibility across nodes (issue 20; decisions
/// N55–N58): who has an item open, and which conversations a person declared active, count on
/// every node, and a killed node's people stop counting within the heartbeat's bound. Real peers
/// through `NodeCluster` (PostgreSQL, nats-server, `tandem serve` nodes), as `SessionClusterTests`.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct PresenceClusterTests {
    typealias Session = SessionProtocolTests

    /// The last `presence` envelope `probe` heard for `collaboration`.
    static func presence(_ probe: StreamProbe, _ collaboration: String) -> JSONValue? {
        probe.envelopes.withLock { $0.last { $0["type"] == "presence" && $0["collaborationIdentifier"]?.stringValue == collaboration } }
    }

    /// Whether `probe` heard, last, that exactly `people` have `collaboration` open.
    static func hears(_ probe: StreamProbe, _ collaboration: String, present people: [Person]) async -> Bool {
        let names = people.map(\.recordName).sorted()
        return await probe.wait(seconds: 20) { probe in
            guard let last = presence(probe, collaboration) else { return false }
            return last["activeParticipantCount"]?.int64Value == Int64(names.count)
                && last["participants"]?.arrayValue?.compactMap(\.stringValue) == names
        }
    }

    static func send(_ probe: StreamProbe, _ type: String, _ collaboration: String) async {
        await probe.client.send(text: JSONWriter.string(["type": .string(type), "collaborationIdentifier": .string(collaboration)]))
    }

    /// Ada opens a collaboration on A while Bob watches on B: Bob hears her; Bob opens it on B and
    /// Ada hears him; Ada's stream closes and Bob hears her go; Ada opens it on C and C is
    /// SIGKILLed: Bob hears her go within the heartbeat's bound (N56).
    @Test func presenceOnOneNodeIsHeardOnTheOthersAndAKilledNodesPeopleStopCounting() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob")
        // An app's own collaboration, shared into Ada and Bob's conversation (its audience, R28).
        let created = try cluster.a.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
        let id = unique("doc")
        let shared = try cluster.b.tandem("conversations/messages/send", [
            "conversation": .string(conversation), "text": "our plan",
            "collaboration": ["collaborationIdentifier": .string(id), "url": .string("https://docs.example.org/\(id)"), "title": "Plan"],
        ], as: ada)
        #expect(shared.status == 200, "\(shared.text)")

        let bobOnB = try await StreamProbe.connect(cluster.b, as: bob)
        #expect(await bobOnB.wait(seconds: 20) { $0.hasHello })
        await Self.send(bobOnB, "presence.watch", id)
        #expect(await Self.hears(bobOnB, id, present: []), "\(bobOnB.envelopes.withLock { $0 })")

        let adaOnA = try await StreamProbe.connect(cluster.a, as: ada)
        #expect(await adaOnA.wait(seconds: 20) { $0.hasHello })
        await Self.send(adaOnA, "presence.open", id)
        #expect(await Self.hears(bobOnB, id, present: [ada]), "Bob on B hears Ada open it on A: \(String(describing: Self.presence(bobOnB, id)))")

        await Self.send(bobOnB, "presence.open", id)
        #expect(await Self.hears(adaOnA, id, present: [ada, bob]), "\(String(describing: Self.presence(adaOnA, id)))")
        #expect(await Self.hears(bobOnB, id, present: [ada, bob]))

        // A closed connection ends its presence on every node.
        adaOnA.client.close()
        #expect(await Self.hears(bobOnB, id, present: [bob]), "\(String(describing: Self.presence(bobOnB, id)))")

        // A killed node's people stop counting within the bound (3 s of silence, a 1 s sweep).
        let adaOnC = try await StreamProbe.connect(cluster.c, as: ada)
        #expect(await adaOnC.wait(seconds: 20) { $0.hasHello })
        await Self.send(adaOnC, "presence.open", id)
        #expect(await Self.hears(bobOnB, id, present: [ada, bob]))
        let killed = Date()
        cluster.c.kill()
        #expect(await Self.hears(bobOnB, id, present: [bob]), "\(String(describing: Self.presence(bobOnB, id)))")
        let after = Date().timeIntervalSince(killed)
        // A figure, not an assertion (DESIGN.md §7).
        print("PresenceClusterTests: a killed node's presence ended \(String(format: "%.2f", after)) s after SIGKILL")
    }

    /// Ada declares a conversation active on A; her other device on B hears the hint and is
    /// eligible there; withdrawn on A, the hint comes again and she is not; declared on C and C
    /// killed, the hint comes and she is not eligible on B any more (N57).
    @Test func eligibilityDeclaredOnOneNodeCountsOnTheOthersAndEndsWithItsNode() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob")
        let created = try cluster.a.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let onB = try await StreamProbe.connect(cluster.b, as: ada)
        for probe in [onA, onB] { #expect(await probe.wait(seconds: 20) { $0.hasHello }) }

        func eligible() async throws -> JSONValue {
            try await Session.reply(onB, ["type": "groupState", "conversationID": .string(conversation)])["result"] ?? .null
        }
        func hints() -> Int { onB.envelopes.withLock { $0.filter { $0["type"] == "groupState.changed" }.count } }
        #expect(try await eligible()["eligible"] == false)

        var before = hints()
        _ = try await Session.reply(onA, ["type": "conversation.activate", "conversationID": .string(conversation)])
        #expect(await onB.wait(seconds: 20) { _ in hints() > before }, "the hint reaches Ada's connection on B")
        let declared = try await eligible()
        #expect(declared["eligible"] == true, "\(declared)")

        before = hints()
        _ = try await Session.reply(onA, ["type": "conversation.deactivate", "conversationID": .string(conversation)])
        #expect(await onB.wait(seconds: 20) { _ in hints() > before })
        #expect(try await eligible()["reason"] == "noActiveConversation")

        let onC = try await StreamProbe.connect(cluster.c, as: ada)
        #expect(await onC.wait(seconds: 20) { $0.hasHello })
        before = hints()
        _ = try await Session.reply(onC, ["type": "conversation.activate", "conversationID": .string(conversation)])
        #expect(await onB.wait(seconds: 20) { _ in hints() > before })
        #expect(try await eligible()["eligible"] == true)
        before = hints()
        cluster.c.kill()
        #expect(await onB.wait(seconds: 20) { _ in hints() > before }, "a killed node's declarations end with a hint")
        #expect(try await eligible()["reason"] == "noActiveConversation")
    }

    /// The bus goes down: each node forgets the other's people and declarations after 3 s of
    /// silence (it cannot know better); when the bus is back they come back, both ways, without
    /// anyone opening or declaring again (N56, N57: `all` with `askBack`, `declarationsWanted`).
    @Test func presenceAndEligibilityComeBackWithTheBus() async throws {
        let cluster = try NodeCluster(nodes: 2)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob")
        let created = try cluster.a.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
        let id = unique("doc")
        let shared = try cluster.a.tandem("conversations/messages/send", [
            "conversation": .string(conversation), "text": "our plan",
            "collaboration": ["collaborationIdentifier": .string(id), "url": .string("https://docs.example.org/\(id)"), "title": "Plan"],
        ], as: ada)
        #expect(shared.status == 200, "\(shared.text)")
        let adaOnA = try await StreamProbe.connect(cluster.a, as: ada)
        let adaOnB = try await StreamProbe.connect(cluster.b, as: ada)
        let bobOnB = try await StreamProbe.connect(cluster.b, as: bob)
        for probe in [adaOnA, adaOnB, bobOnB] { #expect(await probe.wait(seconds: 20) { $0.hasHello }) }
        func eligibleOnB() async throws -> Bool? {
            try await Session.reply(adaOnB, ["type": "groupState", "conversationID": .string(conversation)])["result"]?["eligible"]?.boolValue
        }
        func eventually(_ expected: Bool) async throws -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if try await eligibleOnB() == expected { return true }
                try await Task.sleep(for: .milliseconds(200))
            }
            return false
        }

        await Self.send(bobOnB, "presence.watch", id)
        await Self.send(adaOnA, "presence.open", id)
        _ = try await Session.reply(adaOnA, ["type": "conversation.activate", "conversationID": .string(conversation)])
        #expect(await Self.hears(bobOnB, id, present: [ada]))
        #expect(try await eventually(true))

        try cluster.nats.stop(abruptly: true)
        #expect(await Self.hears(bobOnB, id, present: []), "A is silent: its people stop counting on B")
        #expect(try await eventually(false))

        try cluster.nats.start()
        #expect(await probeHearsWithinAMinute(bobOnB, id, present: [ada]), "\(String(describing: Self.presence(bobOnB, id)))")
        #expect(try await eventually(true), "Ada's declaration on A counts on B again")
    }

    /// `hears`, with time for libnats to reconnect.
    func probeHearsWithinAMinute(_ probe: StreamProbe, _ collaboration: String, present people: [Person]) async -> Bool {
        let names = people.map(\.recordName).sorted()
        return await probe.wait(seconds: 60) { probe in
            Self.presence(probe, collaboration)?["participants"]?.arrayValue?.compactMap(\.stringValue) == names
        }
    }
}
