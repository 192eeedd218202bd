import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// One group session with members on three `tandem serve` nodes (issue 20 item 3; decisions
/// N19–N24; the owner's death is `SessionFailoverTests`, N33): the node that activated it owns it; the others forward to it and deliver what it
/// sends them. Real peers through `NodeCluster` (PostgreSQL, nats-server and the nodes), as
/// `BusScenarioTests`.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct SessionClusterTests {
    typealias Session = SessionProtocolTests

    /// `(source participant, sequence, payload)` of every messenger frame `probe` received, in arrival order.
    static func deliveries(_ probe: StreamProbe) -> [(source: String, sequence: UInt64, payload: String)] {
        probe.frames.withLock { frames in
            frames.map { frame in
                let source = UUID(uuid: frame[18..<34].withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }).uuidString
                let sequence = frame[34..<42].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
                let typeLength = Int(frame[42]) << 8 | Int(frame[43])
                return (source, sequence, String(decoding: frame[(44 + typeLength)...], as: UTF8.self))
            }
        }
    }

    @Test func aSessionStartedOnAIsSharedByMembersOnBAndCInOneOrderWithOneStateAndOneLimit() async throws {
        let cluster = try NodeCluster(nodes: 3, extraArguments: ["--session-participant-limit", "4"])
        let c = cluster.c
        let ada = try cluster.person("ada"), bob = try cluster.person("bob"), carol = try cluster.person("carol")
        let created = try cluster.a.tandem("conversations/create", ["members": [.string(bob.recordName), .string(carol.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let onB = try await StreamProbe.connect(cluster.b, as: bob)
        let onC = try await StreamProbe.connect(c, as: carol)

        // Started on A: B and C hear of it.
        _ = try await Session.reply(onA, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Session.reply(onA, ["type": "activity.activate", "activity": Session.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue, "\(activated)")
        for probe in [onB, onC] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
                $0["type"] == "session.available" && $0["session"]?["sessionID"]?.stringValue == sessionID } } },
                    "\(probe.envelopes.withLock { $0 })")
        }

        // Joined from all three nodes: one participant list, kept by the owner.
        var participants: [String] = []
        for probe in [onA, onB, onC] {
            let joined = try await Session.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
            participants.append(try #require(joined["result"]?["participantID"]?.stringValue, "\(joined)"))
        }
        #expect(await onA.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.participants"
            && $0["participants"]?.arrayValue?.count == 3 } } })

        // Reliable messages from all three at once: every member hears the other two's, in one order.
        let count = 20
        await withTaskGroup(of: Void.self) { group in
            for (index, probe) in [onA, onB, onC].enumerated() {
                group.addTask {
                    for n in 1...count {
                        let frame = Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: true, type: "chat",
                                                   payload: Array("\(index)-\(n)".utf8))
                        await probe.client.send(binary: frame)
                    }
                }
            }
        }
        for probe in [onA, onB, onC] {
            #expect(await probe.wait(seconds: 30) { $0.frames.withLock { $0.count } >= 2 * count }, "\(probe.frames.withLock { $0.count })")
        }
        let heard = [onA, onB, onC].map(Self.deliveries)
        var stamps: [String: UInt64] = [:]
        for (index, list) in heard.enumerated() {
            #expect(list.count == 2 * count, "member \(index) heard \(list.count)")
            #expect(!list.contains { $0.source == participants[index] }, "member \(index) heard itself")
            #expect(list.map(\.sequence) == list.map(\.sequence).sorted() && Set(list.map(\.sequence)).count == list.count,
                    "member \(index) heard out of order: \(list.map(\.sequence))")
            for delivery in list {
                if let known = stamps[delivery.payload] {
                    #expect(known == delivery.sequence, "\(delivery.payload) numbered \(known) and \(delivery.sequence)")
                }
                stamps[delivery.payload] = delivery.sequence
                // Each sender's messages keep the order it sent them.
            }
            for sender in 0..<3 where sender != index {
                let own = list.filter { $0.payload.hasPrefix("\(sender)-") }.map(\.payload)
                #expect(own == (1...count).map { "\(sender)-\($0)" }, "member \(index) heard sender \(sender) as \(own)")
            }
        }
        #expect(Set(stamps.values).count == 3 * count, "one number per message across the cluster")

        // State set on B reaches A and C; a late joiner on C gets it and every participant.
        let set = try await Session.reply(onB, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "board", "value": "x"])
        #expect(set["error"] == nil, "\(set)")
        for probe in [onA, onC] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.state" && $0["key"] == "board" } } })
        }
        let late = try await StreamProbe.connect(c, as: carol)
        let lateJoin = try await Session.reply(late, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(lateJoin["result"]?["store"]?["board"] == "x", "\(lateJoin)")
        #expect(lateJoin["result"]?["participants"]?.arrayValue?.count == 4, "\(lateJoin)")

        // The limit (4) holds across nodes: a fifth participant, on B, is refused by the owner.
        let extra = try await StreamProbe.connect(cluster.b, as: ada)
        let refused = try await Session.reply(extra, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(refused["error"]?["serverErrorCode"] == "TOO_MANY_PARTICIPANTS", "\(refused)")

        // Leaving from C is heard on A; ended from B, every member hears it.
        late.client.close()
        #expect(await onA.wait(seconds: 20) { $0.envelopes.withLock { $0.last { $0["type"] == "session.participants" }?["participants"]?
            .arrayValue?.count == 3 } })
        let ended = try await Session.reply(onB, ["type": "session.end", "sessionID": .string(sessionID)])
        #expect(ended["error"] == nil, "\(ended)")
        for probe in [onA, onB, onC, extra] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.invalidated"
                && $0["sessionID"]?.stringValue == sessionID } } }, "\(probe.envelopes.withLock { $0.suffix(3) })")
        }
        // Once ended, the session is gone on every node: a join from C is refused.
        let afterwards = try await Session.reply(onC, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(afterwards["error"]?["serverErrorCode"] == "NOT_FOUND", "\(afterwards)")
    }

    /// N46: the owner sends a frame once per remote node, with the receivers' connection IDs,
    /// and that node hands it to each of them. Four receivers on B and one on C must each hear
    /// every frame, in the owner's order for reliable frames and the sender's for unreliable.
    @Test func aFrameForSeveralReceiversOnOneNodeReachesEveryOneOfThemInOrder() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob"), carol = try cluster.person("carol")
        let created = try cluster.a.tandem("conversations/create", ["members": [.string(bob.recordName), .string(carol.recordName)]], as: ada)
        let conversation = try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
        let sender = try await StreamProbe.connect(cluster.a, as: ada)
        var receivers: [StreamProbe] = []
        for person in [bob, bob, carol, carol] { receivers.append(try await StreamProbe.connect(cluster.b, as: person)) }
        receivers.append(try await StreamProbe.connect(cluster.c, as: carol))

        _ = try await Session.reply(sender, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Session.reply(sender, ["type": "activity.activate", "activity": Session.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue, "\(activated)")
        for probe in receivers {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
                $0["type"] == "session.available" && $0["session"]?["sessionID"]?.stringValue == sessionID } } })
        }
        for probe in [sender] + receivers {
            let joined = try await Session.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
            #expect(joined["result"]?["participantID"] != nil, "\(joined)")
        }
        #expect(await sender.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.participants"
            && $0["participants"]?.arrayValue?.count == 6 } } })

        // Reliable and unreliable frames interleaved, as one sender sends them.
        let count = 30
        for n in 1...count {
            for reliable in [true, false] {
                await sender.client.send(binary: Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: reliable,
                                                               type: "chat", payload: Array("\(reliable ? "r" : "u")-\(n)".utf8)))
            }
        }
        for probe in receivers {
            #expect(await probe.wait(seconds: 30) { $0.frames.withLock { $0.count } >= 2 * count }, "\(probe.frames.withLock { $0.count })")
        }
        var reference: [UInt64]?
        for (index, probe) in receivers.enumerated() {
            let heard = Self.deliveries(probe)
            let reliable = heard.filter { $0.payload.hasPrefix("r-") }, unreliable = heard.filter { $0.payload.hasPrefix("u-") }
            #expect(reliable.map(\.payload) == (1...count).map { "r-\($0)" }, "receiver \(index) heard \(reliable.map(\.payload))")
            #expect(unreliable.map(\.payload) == (1...count).map { "u-\($0)" }, "receiver \(index) heard \(unreliable.map(\.payload))")
            let numbers = reliable.map(\.sequence)
            #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count, "receiver \(index): \(numbers)")
            if let reference { #expect(numbers == reference, "receiver \(index) numbered differently") } else { reference = numbers }
        }
    }
}
