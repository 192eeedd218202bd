import Foundation
import Synchronization
import Testing
import TandemCore
import TandemStore
@testable import TandemServer

/// The bus's events as they travel between nodes (decisions N2, N3): `Codable` round trips that
/// keep what the hubs need exactly, and subjects that NATS accepts.
struct BusEventTests {
    static func roundTrip(_ event: BusEvent) throws -> BusEvent {
        try JSONDecoder().decode(BusEvent.self, from: JSONEncoder().encode(event))
    }

    @Test func aNotificationKeepsItsJSONExactly() throws {
        var notification = PushNotification(recipient: "_ada", subscriptionID: "notes", kind: "query", container: "iCloud.com.example.app",
                                            environment: "development", databaseScope: "PRIVATE",
                                            zoneID: ZoneID(zoneName: "work", ownerRecordName: "_ada"),
                                            notificationInfo: ["alertBody": "hi", "shouldBadge": true],
                                            originDeviceID: "device-1", webhookURL: "https://hooks.example/a", webhookSecret: "s3cret",
                                            timestamp: 1_764_000_000_123)
        notification.recordName = "note-1"
        notification.queryReason = "recordCreated"
        // An INT64 past 2^53, a key order that is not sorted, a nested value.
        notification.fields = ["z": ["value": .int(9_007_199_254_740_993), "type": "INT64"], "a": ["value": .double(1.5)]]
        let decoded = try Self.roundTrip(BusEvent(origin: "node-a", body: .notification(notification)))
        guard case .notification(let back) = decoded.body else { Issue.record("not a notification: \(decoded.body)"); return }
        #expect(decoded.origin == "node-a")
        #expect(JSONWriter.string(back.json) == JSONWriter.string(notification.json))
        #expect(back.fields?.keys == ["z", "a"])
        #expect(back.fields?["z"]?["value"] == .int(9_007_199_254_740_993))
        #expect(back.recipient == "_ada" && back.originDeviceID == "device-1" && back.webhookURL == "https://hooks.example/a"
                && back.webhookSecret == "s3cret" && back.notificationID == notification.notificationID)
    }

    @Test func conversationEffectsKeepEnvelopesRecipientsAndMembership() throws {
        var effects = ConversationHub.Effects(container: "iCloud.com.example.app", environment: .production)
        effects.envelopes = [(["type": "conversation.event", "event": ["seq": .int(7), "text": "hello \u{0} there"]], ["_bob", "_cat"])]
        effects.membership = [MembershipChange(kind: .removed, conversationID: "c1", container: "iCloud.com.example.app",
                                               environment: .production, member: "_cat", actor: "_ada")]
        effects.highlightViewers = ["_bob"]
        let decoded = try Self.roundTrip(BusEvent(origin: "node-a", body: .conversation(effects)))
        guard case .conversation(let back) = decoded.body else { Issue.record("not effects: \(decoded.body)"); return }
        #expect(back.container == effects.container && back.environment == .production)
        #expect(back.envelopes.count == 1 && back.envelopes[0].envelope == effects.envelopes[0].envelope)
        #expect(back.envelopes[0].recipients == ["_bob", "_cat"])
        #expect(back.membership == effects.membership)
        #expect(back.highlightViewers == ["_bob"])
    }

    @Test func subjectsAreOneTokenPerContainerAndEnvironment() {
        #expect(BusEvent.subject(container: "iCloud.com.example.app", environment: "development")
                == "tandem.1.development.iCloud%2Ecom%2Eexample%2Eapp")
        #expect(BusEvent.subjectToken("a b*c>d") == "a%20b%2Ac%3Ed")
        #expect(BusEvent.subjectToken("") == "%")
        #expect(BusEvent(origin: "n", body: .grantsRevoked).subject == "tandem.1.cluster")
        // Every token of a subject is free of NATS' separators and wildcards.
        let subject = BusEvent.subject(container: "x.*.>. y", environment: "production")
        #expect(subject.split(separator: ".").count == 4, "\(subject)")
        #expect(!subject.contains(" ") && !subject.contains("*") && !subject.contains(">"))
    }

    @Test func anInProcessBusHandsEventsToSubscribersAtOnceAndSendsNothing() {
        let bus = EventBus()
        let heard = Mutex<[String]>([])
        bus.subscribe { delivery in
            if case .event(let event) = delivery, case .grantsRevoked = event.body { heard.withLock { $0.append(event.origin) } }
        }
        bus.publish(.grantsRevoked)
        #expect(heard.withLock { $0 } == [bus.node], "delivered before publish returned, as from this node")
        #expect(bus.published.load(ordering: .relaxed) == 0)
        #expect(bus.isLocal)
    }

    /// What a forwarding node recognises as the answer it waits for (N75), in the text the owner
    /// writes.
    @Test func answersAreRecognisedInTheTextTheOwnerWrites() {
        let reply = JSONWriter.string(["type": "reply", "id": .int(42), "result": .object(["participantID": "x"])])
        #expect(SessionHub.repliedID(reply) == "42")
        #expect(SessionHub.repliedID(JSONWriter.string(["type": "reply", "id": .string("a"), "error": .object([:])])) == #""a""#)
        #expect(SessionHub.repliedID(JSONWriter.string(["type": "session.state", "id": .int(1)])) == nil)
        let sent = JSONWriter.string(["type": "session.sent", "sessionID": .string(UUID().uuidString), "clientSequence": .int(7),
                                      "sequence": .int(2049)])
        #expect(SessionHub.answeredSequence(sent) == 7)
    }
}
