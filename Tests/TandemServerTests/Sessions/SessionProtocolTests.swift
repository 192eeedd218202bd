import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP

/// The session protocol on the stream WebSocket refuses bad input with a CloudKit-style error in
/// its reply (decisions G3, G5), and never crashes the server.
@Suite struct SessionProtocolTests {
    static let server: TestServer = { try! TestServer() }()

    struct Setup {
        var ada: StreamProbe
        var eve: StreamProbe
        var adaPerson: Person
        var evePerson: Person
        var sessionID: String
    }

    /// Ada and Bob in a conversation; Ada's stream activates a session; Eve is a stranger.
    static func setup() async throws -> Setup {
        let ada = try server.person("ada"), bob = try server.person("bob"), eve = try server.person("eve")
        let created = try server.tandem("conversations/create", ["members": [.string(bob.recordName)]], as: ada)
        guard let conversation = created.json["conversationID"]?.stringValue else { throw TestFailure("no conversation: \(created.text)") }
        let adaProbe = try await StreamProbe.connect(server, as: ada)
        let eveProbe = try await StreamProbe.connect(server, as: eve)
        _ = try await reply(adaProbe, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await reply(adaProbe, ["type": "activity.activate", "activity": activity()])
        guard let id = activated["result"]?["session"]?["sessionID"]?.stringValue else { throw TestFailure("not activated: \(activated)") }
        return Setup(ada: adaProbe, eve: eveProbe, adaPerson: ada, evePerson: eve, sessionID: id)
    }

    static func activity(type: String = "generic", payload: String = "{}", fallbackURL: String? = nil,
                         identifier: String = "com.example.protocol") -> JSONValue {
        var metadata: JSONObject = ["type": .string(type)]
        if let fallbackURL { metadata["fallbackURL"] = .string(fallbackURL) }
        return ["identifier": .string(identifier), "metadata": .object(metadata), "payload": .string(payload)]
    }

    /// Sends an envelope with a fresh `id` and returns the reply carrying it.
    static func reply(_ probe: StreamProbe, _ envelope: JSONObject) async throws -> JSONValue {
        let id = Int64.random(in: 1...Int64.max)
        var body = envelope
        body["id"] = .int(id)
        await probe.client.send(text: JSONWriter.string(.object(body)))
        var found: JSONValue?
        await probe.wait(seconds: 10) { probe in
            found = probe.envelopes.withLock { $0.last { $0["type"] == "reply" && $0["id"]?.int64Value == id } }
            return found != nil
        }
        guard let found else { throw TestFailure("no reply to \(envelope)") }
        return found
    }

    enum Caller: Sendable { case ada, eve }

    struct Refusal: Sendable, CustomTestStringConvertible {
        var name: String
        var caller: Caller
        var envelope: JSONObject
        var code: String
        var testDescription: String { name }
        init(_ name: String, _ caller: Caller, _ envelope: JSONObject, _ code: String) {
            self.name = name
            self.caller = caller
            self.envelope = envelope
            self.code = code
        }
    }

    static let refusals: [Refusal] = [
        Refusal("join with a malformed session ID", .ada, ["type": "session.join", "sessionID": "not-a-uuid"], "BAD_REQUEST"),
        Refusal("join an unknown session", .ada, ["type": "session.join", "sessionID": .string(UUID().uuidString)], "NOT_FOUND"),
        Refusal("a stranger joins", .eve, ["type": "session.join", "sessionID": "SESSION"], "ACCESS_DENIED"),
        Refusal("a stranger ends it", .eve, ["type": "session.end", "sessionID": "SESSION"], "ACCESS_DENIED"),
        Refusal("state before joining", .ada, ["type": "session.state.set", "sessionID": "SESSION", "key": "k", "value": "v"], "NOT_FOUND"),
        Refusal("leave before joining", .ada, ["type": "session.leave", "sessionID": "SESSION"], "NOT_FOUND"),
        Refusal("an unknown activity type", .ada, ["type": "activity.activate", "activity": activity(type: "dance")], "BAD_REQUEST"),
        Refusal("a fallback URL that is not http(s)", .ada, ["type": "activity.activate", "activity": activity(fallbackURL: "ftp://x/y")], "BAD_REQUEST"),
        Refusal("an activity payload over 256 KiB", .ada,
         ["type": "activity.activate", "activity": activity(payload: String(repeating: "x", count: (256 << 10) + 1))], "MESSAGE_TOO_LARGE"),
        Refusal("an activity without identifier", .ada, ["type": "activity.activate", "activity": ["metadata": [:]]], "BAD_REQUEST"),
        Refusal("a stranger with no declared conversation", .eve, ["type": "activity.activate", "activity": activity()], "ACCESS_DENIED"),
        Refusal("staging with nobody", .ada, ["type": "activity.stage", "activity": activity(), "people": []], "BAD_REQUEST"),
        Refusal("an unknown session envelope", .ada, ["type": "session.dance"], "BAD_REQUEST"),
    ]

    @Test(arguments: refusals)
    func refusalsAreTypedReplies(_ entry: Refusal) async throws {
        let setup = try await Self.setup()
        var envelope = entry.envelope
        if envelope["sessionID"] == "SESSION" { envelope["sessionID"] = .string(setup.sessionID) }
        let answer = try await Self.reply(entry.caller == .ada ? setup.ada : setup.eve, envelope)
        #expect(answer["error"]?["serverErrorCode"]?.stringValue == entry.code, "\(entry.name): \(answer)")
        #expect(answer["result"] == nil)
    }

    /// Activity identifiers (C66): reverse-DNS-like names pass; markup, spaces, generic brackets,
    /// a leading dot and over-long names are `BAD_REQUEST` with the rule as the reason.
    static let identifiers: [(String, Bool)] = [
        ("com.example.draw", true), ("MyApp.Drawing_2", true), ("com.example-co.draw", true), ("9lives.app", true),
        (String(repeating: "a", count: 255), true),
        ("com.x.<b>x</b>", false), ("com.example.draw now", false), ("MyApp.Box<Swift.Int>", false), (".com.example", false),
        ("com.example.\"quoted\"", false), ("com.example.dräw", false), ("", false), (String(repeating: "a", count: 256), false),
    ]

    @Test(arguments: identifiers)
    func activityIdentifiersMustBeReverseDNSNames(_ identifier: String, _ accepted: Bool) async throws {
        let setup = try await Self.setup()
        let answer = try await Self.reply(setup.ada, ["type": "activity.activate", "replace": true,
                                                     "activity": Self.activity(identifier: identifier)])
        if accepted {
            #expect(answer["result"]?["session"]?["sessionID"]?.stringValue != nil, "\(identifier): \(answer)")
        } else {
            #expect(answer["error"]?["serverErrorCode"]?.stringValue == "BAD_REQUEST", "\(identifier): \(answer)")
            #expect(answer["error"]?["reason"]?.stringValue == "activity.identifier must be \(Names.activityIdentifierRule)")
            #expect(answer["result"] == nil)
        }
    }

    @Test func malformedAndUnjoinedFramesAreRefused() async throws {
        let setup = try await Self.setup()
        await setup.ada.client.send(binary: [0x01, 0x01, 0x02])
        #expect(await setup.ada.wait { $0.envelopes.withLock { $0.contains { $0["reason"] == "malformed session frame" } } })
        var frame: [UInt8] = [0x01, 0x03]
        withUnsafeBytes(of: UUID(uuidString: setup.sessionID)!.uuid) { frame.append(contentsOf: $0) }
        frame += [0, 0, 0, 9, 0, 1, 0x41, 0, 0, 0x42]
        await setup.ada.client.send(binary: frame)
        #expect(await setup.ada.wait { probe in
            probe.envelopes.withLock { $0.contains { $0["type"] == "session.sendFailed" && $0["clientSequence"] == 9
                && $0["error"]?["serverErrorCode"] == "NOT_FOUND" } }
        })
        // The connection stays usable.
        let answer = try await Self.reply(setup.ada, ["type": "session.join", "sessionID": .string(setup.sessionID)])
        #expect(answer["result"]?["participantID"]?.stringValue != nil)
    }

    /// A join repeated from the same connection is answered as the first was, with the same
    /// participant (N82): a join whose answer was lost between nodes is retried by clients, and
    /// was refused `BAD_REQUEST` "already joined", leaving the client without its participant ID
    /// (stop 42's review).
    @Test func aRepeatedJoinIsAnsweredWithTheSameParticipant() async throws {
        let setup = try await Self.setup()
        let first = try await Self.reply(setup.ada, ["type": "session.join", "sessionID": .string(setup.sessionID)])
        let participant = try #require(first["result"]?["participantID"]?.stringValue, "\(first)")
        _ = try await Self.reply(setup.ada, ["type": "session.state.set", "sessionID": .string(setup.sessionID), "key": "k", "value": "v"])
        let again = try await Self.reply(setup.ada, ["type": "session.join", "sessionID": .string(setup.sessionID)])
        #expect(again["result"]?["participantID"]?.stringValue == participant, "\(again)")
        #expect(again["result"]?["participants"]?.arrayValue?.count == 1, "one participant, not two: \(again)")
        #expect(again["result"]?["store"]?["k"] == "v", "the state as it is now: \(again)")
    }

    @Test func journalRefusesStrangersAndUploadsWithoutAParticipant() async throws {
        let setup = try await Self.setup()
        let base = "\(Self.server.baseURL)/journal/1/\(TestServer.container)/development/\(setup.sessionID)"
        let noParticipant = try Self.server.request("POST", base, body: Data("x".utf8), token: .some(setup.adaPerson.token))
        #expect(noParticipant.status == 400 && noParticipant.json["serverErrorCode"] == "BAD_REQUEST")
        let notJoined = try Self.server.request("POST", base + "?participantID=\(UUID().uuidString)", body: Data("x".utf8),
                                                token: .some(setup.adaPerson.token))
        #expect(notJoined.status == 404)
        let stranger = try Self.server.request("GET", base + "/\(UUID().uuidString)", token: .some(setup.evePerson.token))
        #expect(stranger.status == 404 && stranger.json["serverErrorCode"] == "NOT_FOUND")
        let anonymous = try Self.server.request("GET", base + "/\(UUID().uuidString)", token: .some(nil))
        #expect(anonymous.status >= 400)
    }
    @Test func aJoinedMemberRemovedFromTheConversationHearsOneInvalidation() async throws {
        let ada = try Self.server.person("ada"), bob = try Self.server.person("bob"), carol = try Self.server.person("carol")
        let created = try Self.server.tandem("conversations/create", ["members": [.string(bob.recordName), .string(carol.recordName)]],
                                             as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue)
        let adaProbe = try await StreamProbe.connect(Self.server, as: ada)
        let bobProbe = try await StreamProbe.connect(Self.server, as: bob)
        _ = try await Self.reply(adaProbe, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Self.reply(adaProbe, ["type": "activity.activate", "activity": Self.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue)
        for probe in [adaProbe, bobProbe] {
            let joined = try await Self.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
            #expect(joined["result"]?["participantID"]?.stringValue != nil)
        }
        let removed = try Self.server.tandem("conversations/members/remove",
                                             ["conversation": .string(conversation), "member": .string(bob.recordName)], as: ada)
        #expect(removed.status == 200, "\(removed.text)")
        func invalidations(_ probe: StreamProbe) -> Int {
            probe.envelopes.withLock { $0.filter { $0["type"] == "session.invalidated" && $0["sessionID"]?.stringValue == sessionID }.count }
        }
        #expect(await bobProbe.wait { invalidations($0) >= 1 })
        // Whatever else is on its way arrives meanwhile (Ada's stream hears the new participant list).
        #expect(await adaProbe.wait { probe in
            probe.envelopes.withLock { $0.contains { $0["type"] == "session.participants" && $0["participants"]?.arrayValue?.count == 1 } }
        })
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(invalidations(bobProbe) == 1, "Bob hears conversationEnded once")
        #expect(bobProbe.envelopes.withLock { $0.last { $0["type"] == "session.invalidated" }?["reason"] } == "conversationEnded")
        #expect(invalidations(adaProbe) == 0, "the session goes on for Ada")
    }
}
