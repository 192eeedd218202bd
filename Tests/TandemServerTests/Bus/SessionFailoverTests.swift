import Foundation
import Synchronization
import Testing
import TandemCore
import TandemHTTP
import TandemTestSupport

/// A group session outlives its owner node, and its journal and `activity.stage` work from any
/// node (issue 20 items 3–4; decisions N33–N38). Real peers through `NodeCluster`: PostgreSQL,
/// nats-server, three `tandem serve` nodes and nginx in front of them.
@Suite(.serialized, .disabled(if: TestStore.isPostgres, "starts its own PostgreSQL nodes; once per run is enough"))
struct SessionFailoverTests {
    typealias Session = SessionProtocolTests

    /// A conversation of `members` made by the first, and a stream for each on the given nodes,
    /// which declared it active.
    static func conversation(_ cluster: NodeCluster, _ members: [Person]) throws -> String {
        let created = try cluster.a.tandem("conversations/create", ["members": .array(members.dropFirst().map { JSONValue.string($0.recordName) })],
                                           as: members[0])
        return try #require(created.json["conversationID"]?.stringValue, "\(created.text)")
    }

    /// `owner` activates `conversation` and starts a session in it, which every one of `others`
    /// hears is available; the session's ID.
    static func startSession(_ owner: StreamProbe, in conversation: String, heardBy others: [StreamProbe]) async throws -> String {
        _ = try await Session.reply(owner, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Session.reply(owner, ["type": "activity.activate", "activity": Session.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue, "\(activated)")
        for probe in others {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.available" } } })
        }
        return sessionID
    }

    /// One member per node (Ada on A, Bob on B, Carol on C), all joined to a session Ada started.
    static func oneMemberOnEachNode(_ cluster: NodeCluster) async throws -> (members: [StreamProbe], sessionID: String) {
        let names = ["ada", "bob", "carol"]
        let people = try cluster.nodes.indices.map { try cluster.person(names[$0]) }
        let conversation = try Self.conversation(cluster, people)
        var members: [StreamProbe] = []
        for (index, node) in cluster.nodes.enumerated() { members.append(try await StreamProbe.connect(node, as: people[index])) }
        let sessionID = try await Self.startSession(members[0], in: conversation, heardBy: Array(members.dropFirst()))
        for probe in members { _ = try await Self.joined(probe, sessionID) }
        return (members, sessionID)
    }

    static func joined(_ probe: StreamProbe, _ sessionID: String) async throws -> String {
        let joined = try await Session.reply(probe, ["type": "session.join", "sessionID": .string(sessionID)])
        return try #require(joined["result"]?["participantID"]?.stringValue, "\(joined)")
    }

    /// Whether `probe` heard the session's participant list with `count` entries last.
    static func participants(_ probe: StreamProbe, _ count: Int) async -> Bool {
        await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.last { $0["type"] == "session.participants" }?["participants"]?
            .arrayValue?.count == count } }
    }

    /// Sends `count` reliable messages `"tag-n"`.
    static func send(_ probe: StreamProbe, _ sessionID: String, tag: String, count: Int) async {
        for n in 1...count {
            await probe.client.send(binary: Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: true, type: "chat",
                                                          payload: Array("\(tag)-\(n)".utf8)))
        }
    }

    /// Five reliable messages each way at once between `onA` and `onB`: both hear all of the
    /// other's, and one owner numbered them (no sequence number twice). The numbers each heard.
    static func talk(_ onA: StreamProbe, _ onB: StreamProbe, _ sessionID: String, tag: String) async -> (aOnB: [UInt64], bOnA: [UInt64]) {
        async let fromA: Void = Self.send(onA, sessionID, tag: "a" + tag, count: 5)
        async let fromB: Void = Self.send(onB, sessionID, tag: "b" + tag, count: 5)
        _ = await (fromA, fromB)
        #expect(await onB.wait(seconds: 20) { Self.heard($0, tag: "a" + tag).count >= 5 }, "\(Self.heard(onB, tag: "a" + tag))")
        #expect(await onA.wait(seconds: 20) { Self.heard($0, tag: "b" + tag).count >= 5 }, "\(Self.heard(onA, tag: "b" + tag))")
        let aOnB = Self.heard(onB, tag: "a" + tag).map(\.sequence), bOnA = Self.heard(onA, tag: "b" + tag).map(\.sequence)
        #expect(Set(aOnB).isDisjoint(with: bOnA), "one owner numbers every message: \(aOnB) and \(bOnA)")
        return (aOnB, bOnA)
    }

    static func heard(_ probe: StreamProbe, tag: String) -> [(source: String, sequence: UInt64, payload: String)] {
        SessionClusterTests.deliveries(probe).filter { $0.payload.hasPrefix(tag + "-") }
    }

    @Test func whenTheOwnerIsKilledASurvivorTakesTheSessionOverAndTheKilledNodesMembersRejoin() async throws {
        let cluster = try NodeCluster(nodes: 3, balancer: true)
        let front = try #require(cluster.front)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob"), carol = try cluster.person("carol"),
            dave = try cluster.person("dave")
        let conversation = try Self.conversation(cluster, [ada, bob, carol, dave])
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let onB = try await StreamProbe.connect(cluster.b, as: bob)
        let onC = try await StreamProbe.connect(cluster.c, as: carol)
        let sessionID = try await Self.startSession(onA, in: conversation, heardBy: [onB, onC])
        var ids: [String] = []
        for probe in [onA, onB, onC] { ids.append(try await Self.joined(probe, sessionID)) }
        #expect(await Self.participants(onA, 3))

        // Before the kill: state set from B, messages from all three, numbered by A.
        let set = try await Session.reply(onB, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "board", "value": "before"])
        #expect(set["error"] == nil, "\(set)")
        for (probe, tag) in [(onA, "a"), (onB, "b"), (onC, "c")] { await Self.send(probe, sessionID, tag: tag, count: 5) }
        for probe in [onA, onB, onC] {
            #expect(await probe.wait(seconds: 20) { $0.frames.withLock { $0.count } >= 10 }, "\(probe.frames.withLock { $0.count })")
        }
        let before = SessionClusterTests.deliveries(onB).map(\.sequence).max() ?? 0
        #expect(before >= 10)

        // SIGKILL the owner: B and C keep the session (no `session.invalidated`) and hear the
        // participants without Ada's from the node that took over.
        let killed = Date()
        cluster.a.kill()
        for probe in [onB, onC] {
            #expect(await Self.participants(probe, 2), "\(probe.envelopes.withLock { $0.suffix(3) })")
        }
        // A figure, not an assertion (DESIGN.md §7): the kill to both survivors hearing the takeover.
        print("SessionFailoverTests: takeover heard \(String(format: "%.2f", Date().timeIntervalSince(killed))) s after SIGKILL")
        #expect(!onB.has("session.invalidated") && !onC.has("session.invalidated"))

        // The survivors keep messaging: one order, numbers above every number used before the kill.
        async let fromB: Void = Self.send(onB, sessionID, tag: "B", count: 10)
        async let fromC: Void = Self.send(onC, sessionID, tag: "C", count: 10)
        _ = await (fromB, fromC)
        #expect(await onB.wait(seconds: 20) { Self.heard($0, tag: "C").count >= 10 }, "\(Self.heard(onB, tag: "C"))")
        #expect(await onC.wait(seconds: 20) { Self.heard($0, tag: "B").count >= 10 }, "\(Self.heard(onC, tag: "B"))")
        let cOnB = Self.heard(onB, tag: "C"), bOnC = Self.heard(onC, tag: "B")
        #expect(cOnB.map(\.payload) == (1...10).map { "C-\($0)" } && bOnC.map(\.payload) == (1...10).map { "B-\($0)" })
        for list in [cOnB, bOnC] {
            #expect(list.allSatisfy { $0.sequence > before }, "reused a number: \(list.map(\.sequence)), before \(before)")
            #expect(list.map(\.sequence) == list.map(\.sequence).sorted(), "out of order: \(list.map(\.sequence))")
        }
        #expect(Set(cOnB.map(\.sequence)).isDisjoint(with: bOnC.map(\.sequence)), "one number per message")
        #expect(cOnB.allSatisfy { $0.source == ids[2] } && bOnC.allSatisfy { $0.source == ids[1] }, "participant IDs kept")
        let all = SessionClusterTests.deliveries(onB).map(\.sequence)
        #expect(all == all.sorted(), "B heard out of order across the takeover: \(all)")

        // A late joiner through nginx gets the state set before the kill.
        let late = try await StreamProbe.connect(front, as: dave)
        #expect(await late.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.available" && $0["session"]?["sessionID"]?.stringValue == sessionID } } })
        let lateJoin = try await Session.reply(late, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(lateJoin["result"]?["store"]?["board"] == "before", "\(lateJoin)")
        #expect(lateJoin["result"]?["participants"]?.arrayValue?.count == 3, "\(lateJoin)")

        // Ada's stream ended with node A; she reconnects through nginx and rejoins the same session.
        #expect(await onA.wait(seconds: 20) { $0.closed.withLock { $0 } != nil })
        let again = try await StreamProbe.connect(front, as: ada)
        let rejoined = try await Session.reply(again, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(rejoined["result"]?["store"]?["board"] == "before", "\(rejoined)")
        #expect(rejoined["result"]?["participants"]?.arrayValue?.count == 4, "\(rejoined)")
        await Self.send(again, sessionID, tag: "A2", count: 1)
        for probe in [onB, onC, late] {
            #expect(await probe.wait(seconds: 20) { Self.heard($0, tag: "A2").first.map { $0.sequence > before } == true })
        }
    }

    /// A bus outage longer than the failover's 3 s of silence leaves each session one owner
    /// (N63): a node cut off from the bus takes nothing over, and after the reconnect every node
    /// gets a fresh silence window. Before, each node took the session over for itself and, once
    /// the bus was back, members heard none of each other's reliable messages (stop 40's review).
    @Test func aBusOutageLongerThanTheSilenceLeavesTheSessionOneOwner() async throws {
        let cluster = try NodeCluster(nodes: 2)
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB) = (members[0], members[1])
        #expect(await Self.participants(onA, 2))
        await Self.send(onB, sessionID, tag: "b", count: 3)
        #expect(await onA.wait(seconds: 20) { Self.heard($0, tag: "b").count >= 3 }, "\(Self.heard(onA, tag: "b"))")
        let before = Self.heard(onA, tag: "b").map(\.sequence).max() ?? 0

        try cluster.nats.stop(abruptly: true)
        try await Task.sleep(for: .seconds(1))
        // Meanwhile B cannot reach the owner: a reliable message and an envelope are refused at
        // once, retryable, and not delivered later (before: no answer at all, stop 40's review).
        await onB.client.send(binary: Session.frame(session: sessionID, clientSequence: 900, reliable: true, type: "chat",
                                                    payload: Array("cut-off".utf8)))
        #expect(await onB.wait(seconds: 10) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.sendFailed" && $0["clientSequence"] == 900 && $0["error"]?["serverErrorCode"] == "TRY_AGAIN_LATER"
                && $0["error"]?["retryAfter"] == 1 } } }, "\(onB.envelopes.withLock { $0.suffix(5) })")
        // The owner refuses too: a number it gave now would reach only the nodes back on the bus
        // first, and the others would see a gap (N78).
        await onA.client.send(binary: Session.frame(session: sessionID, clientSequence: 901, reliable: true, type: "chat",
                                                    payload: Array("owner-cut-off".utf8)))
        #expect(await onA.wait(seconds: 10) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.sendFailed" && $0["clientSequence"] == 901 && $0["error"]?["serverErrorCode"] == "TRY_AGAIN_LATER" } } },
                "\(onA.envelopes.withLock { $0.suffix(5) })")
        let cutOff = try await Session.reply(onB, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "k", "value": "v"])
        #expect(cutOff["error"]?["serverErrorCode"] == "TRY_AGAIN_LATER", "\(cutOff)")
        try await Task.sleep(for: .seconds(4))
        try cluster.nats.start()
        func connected(_ node: TestServer) -> Bool {
            (try? node.request("GET", node.baseURL + "/healthz", token: .some(nil)).json["bus"]?["state"]) == "connected"
        }
        let deadline = Date().addingTimeInterval(20)
        while !(connected(cluster.a) && connected(cluster.b)) && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(connected(cluster.a) && connected(cluster.b))
        // Past another silence window: a split would have happened by now.
        try await Task.sleep(for: .seconds(4))
        // B's member may have missed A's messages while B's bus was away, and NATS keeps none
        // for it: it is told so and joins again (N81). A's own member missed nothing.
        #expect(await onB.wait(seconds: 10) { $0.has("session.invalidated") }, "\(onB.envelopes.withLock { $0.suffix(6) })")
        #expect(!onA.has("session.invalidated"))
        _ = try await Self.joined(onB, sessionID)
        #expect(await Self.participants(onA, 2))

        let (aOnB, bOnA) = await Self.talk(onA, onB, sessionID, tag: "2")
        #expect((aOnB + bOnA).allSatisfy { $0 > before }, "\(aOnB) \(bOnA), before \(before)")
        #expect(!SessionClusterTests.deliveries(onA).contains { $0.payload == "cut-off" }, "a refused message is never delivered")
        #expect(!SessionClusterTests.deliveries(onB).contains { $0.payload == "owner-cut-off" }, "nor the owner's")
        #expect(!onA.envelopes.withLock { $0.contains { $0["type"] == "session.state" && $0["key"] == "k" } })
    }

    /// With several nodes a whole copy of a session stays small enough for one bus message, with
    /// 16 KiB to spare (N80): it must reach every node, or a node that starts (or restarts) has
    /// none and the session has no successor there (stop 42's reviews: 1.25 MiB of state, then
    /// state within a store-only limit plus a large activity, lost with their owner). A state set
    /// past it is refused `LIMIT_EXCEEDED` and changes nothing; a member on another node then
    /// joins and gets the whole store. (Before N80 the store grew past the bus's limit and such a
    /// join was refused, N61, which stays as a backstop.)
    @Test func aSessionsStateStaysWithinWhatTheBusCarries() async throws {
        let cluster = try NodeCluster(nodes: 2, natsArguments: ["--config", try NATSServer.configFile("max_payload: 32768\n")])
        let ada = try cluster.person("ada"), bob = try cluster.person("bob")
        let conversation = try Self.conversation(cluster, [ada, bob])
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let onB = try await StreamProbe.connect(cluster.b, as: bob)
        let sessionID = try await Self.startSession(onA, in: conversation, heardBy: [onB])
        _ = try await Self.joined(onA, sessionID)
        // 32 KiB less 16 KiB of headroom: about 16,300 bytes for the whole copy.
        let first = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "one",
                                                  "value": .string(String(repeating: "x", count: 8_000))])
        #expect(first["error"] == nil, "\(first)")
        let second = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "two",
                                                   "value": .string(String(repeating: "y", count: 8_000))])
        #expect(second["error"]?["serverErrorCode"] == "LIMIT_EXCEEDED", "\(second)")
        // Escaping counts: 4,000 quotes are 8,000 bytes encoded.
        let quoted = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "three",
                                                   "value": .string(String(repeating: "\"", count: 4_000))])
        #expect(quoted["error"]?["serverErrorCode"] == "LIMIT_EXCEEDED", "\(quoted)")
        // The same bytes unescaped fit.
        let plain = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "four",
                                                  "value": .string(String(repeating: "z", count: 4_000))])
        #expect(plain["error"] == nil, "\(plain)")
        // Filled to within 100 bytes of the limit, a join is refused too: a participant's entry
        // is larger (stop 42's second review: 100 joins pushed a copy over and every node resynced
        // without end).
        var filled = 0
        while filled < 200 {
            let set = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID),
                                                    "key": .string("fill-\(filled)"), "value": .string(String(repeating: "f", count: 100))])
            if set["error"] != nil {
                #expect(set["error"]?["serverErrorCode"] == "LIMIT_EXCEEDED", "\(set)")
                break
            }
            filled += 1
        }
        #expect(filled > 0 && filled < 200)
        let refused = try await Session.reply(onB, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(refused["error"]?["serverErrorCode"] == "LIMIT_EXCEEDED", "\(refused)")
        let removed = try await Session.reply(onA, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "one", "value": ""])
        #expect(removed["error"] == nil, "\(removed)")
        let joined = try await Session.reply(onB, ["type": "session.join", "sessionID": .string(sessionID)])
        let keys = joined["result"]?["store"]?.objectValue.map { Set($0.keys) } ?? []
        #expect(keys.contains("four") && !keys.contains("one") && keys.count == filled + 1, "\(keys.sorted())")
        #expect(await Self.participants(onA, 2))
    }

    /// Stopping the owner with SIGTERM (how a node is removed) hands its sessions over as it
    /// stops (N65): members on the other nodes keep messaging through it. Before, the survivors
    /// waited for 3 s of silence and the messages of those seconds were lost, as after a kill
    /// (stop 40's review: 14 messages at 4/s with no answer).
    @Test func stoppingTheOwnerHandsItsSessionsOverAtOnce() async throws {
        let cluster = try NodeCluster(nodes: 2)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob"), carol = try cluster.person("carol")
        let conversation = try Self.conversation(cluster, [ada, bob, carol])
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let bobOnB = try await StreamProbe.connect(cluster.b, as: bob)
        let carolOnB = try await StreamProbe.connect(cluster.b, as: carol)
        let sessionID = try await Self.startSession(onA, in: conversation, heardBy: [bobOnB])
        for probe in [onA, bobOnB, carolOnB] { _ = try await Self.joined(probe, sessionID) }
        #expect(await Self.participants(onA, 3))

        // The stop, and 40 messages from Bob over the 2 s after it, one every 50 ms.
        let stopped = Task.detached { cluster.a.stop() }
        for n in 1...40 {
            await bobOnB.client.send(binary: Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: true, type: "chat",
                                                           payload: Array("bob-\(n)".utf8)))
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await stopped.value == 0)
        _ = await carolOnB.wait(seconds: 10) { Self.heard($0, tag: "bob").count >= 40 }
        let heard = Self.heard(carolOnB, tag: "bob").map(\.payload)
        print("SessionFailoverTests: of 40 messages sent over a SIGTERM of the owner, \(heard.count) arrived")
        // A message already on its way to the old owner when it left may be lost (N65); before, 1 of 40 arrived.
        #expect(heard.count >= 30, "lost \(40 - heard.count) of 40: \(heard); Bob heard \(bobOnB.envelopes.withLock { $0.suffix(8) })")
        #expect(heard == heard.sorted { Int($0.dropFirst(4))! < Int($1.dropFirst(4))! }, "in order")
        #expect(!carolOnB.has("session.invalidated"))
    }

    /// A member node that falls silent for longer than the failover's 3 s (here stopped with
    /// SIGSTOP) loses its members' places in the sessions other nodes own; when it runs again,
    /// they hear `session.invalidated` and may join again, and the paused node, which heard
    /// nobody while it was stopped, takes nothing over (N69). Before, its members were never
    /// told, and the paused node took the owner's session over for itself: a split.
    @Test func membersOfAPausedNodeAreToldTheyLeftAndThePausedNodeTakesNothingOver() async throws {
        let cluster = try NodeCluster(nodes: 2)
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB) = (members[0], members[1])
        #expect(await Self.participants(onA, 2))

        cluster.b.signal(SIGSTOP)
        #expect(await Self.participants(onA, 1), "the owner drops the silent node's member")
        cluster.b.signal(SIGCONT)
        #expect(await onB.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.invalidated" && $0["sessionID"]?.stringValue == sessionID && $0["reason"] == "error" } } },
                "\(onB.envelopes.withLock { $0.suffix(6) })")

        // Past another silence window, Bob joins again and talks; one owner numbers everything.
        try await Task.sleep(for: .seconds(4))
        _ = try await Self.joined(onB, sessionID)
        #expect(await Self.participants(onA, 2))
        _ = await Self.talk(onA, onB, sessionID, tag: "3")
        #expect(!onA.has("session.invalidated"))
    }

    /// Two of three nodes stopped in the same instant, the owner one of them: the third takes
    /// the session over, and its member hears no `session.invalidated` (N69). Before, a stopping
    /// node could take the other's session over as it left, and its late announcement made the
    /// third node end the session for its members 3 s later.
    @Test func twoNodesStoppedTogetherLeaveTheSessionToTheThird() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB, onC) = (members[0], members[1], members[2])
        #expect(await Self.participants(onA, 3))

        cluster.a.signal(SIGTERM)
        cluster.b.signal(SIGTERM)
        #expect(cluster.a.stop(signalled: true) == 0 && cluster.b.stop(signalled: true) == 0)
        #expect(await Self.participants(onC, 1), "\(onC.envelopes.withLock { $0.suffix(6) })")
        try await Task.sleep(for: .seconds(5))   // past the silence a stale owner would be forgotten after
        #expect(!onC.has("session.invalidated"), "\(onC.envelopes.withLock { $0.suffix(6) })")
        let set = try await Session.reply(onC, ["type": "session.state.set", "sessionID": .string(sessionID), "key": "k", "value": "v"])
        #expect(set["error"] == nil, "the session lives on node C: \(set)")
    }

    /// A partition that cuts the owner alone off the bus (its own nats-server, routed to the
    /// others' one, stops): the other nodes take the session over after 3 s while the owner
    /// keeps serving its own member in its copy. When the owner's bus is back, its copy ends:
    /// its member hears `session.invalidated`, joins again through the same node, and all three
    /// members are in the one session the others kept (N70). Before, the two copies lived on
    /// side by side and never heard each other.
    @Test func anOwnerCutOffAloneGivesItsSessionToTheCopyTheOthersTookOver() async throws {
        let (ownPort, routePort) = (try PostgresCluster.freePort(), try PostgresCluster.freePort())
        // Two nats-servers in one NATS cluster; neither tells clients of the other, so node A,
        // whose --bus names only its own, stays cut off while that one is down.
        let own = try NATSServer(arguments: ["-n", "tandem-test-own", "--cluster_name", "tandem", "--cluster", "nats://127.0.0.1:\(ownPort)",
                                             "--routes", "nats://127.0.0.1:\(routePort)", "--no_advertise"])
        let cluster = try NodeCluster(nodes: 3, natsArguments: ["--cluster_name", "tandem", "--cluster", "nats://127.0.0.1:\(routePort)",
                                                                                 "--no_advertise"],
                                      nodeBus: [0: own.url])
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB, onC) = (members[0], members[1], members[2])
        #expect(await Self.participants(onB, 3))

        try own.stop(abruptly: true)
        // A message on its way to the cut-off owner gets no answer from it: after 5 s its sender
        // is told so (N75), where before it heard nothing.
        await onB.client.send(binary: Session.frame(session: sessionID, clientSequence: 700, reliable: true, type: "chat",
                                                    payload: Array("lost".utf8)))
        // B and C take the session over without A's member; A keeps its own copy meanwhile.
        #expect(await Self.participants(onB, 2), "\(onB.envelopes.withLock { $0.suffix(4) })")
        await Self.send(onB, sessionID, tag: "split", count: 2)
        #expect(await onC.wait(seconds: 20) { Self.heard($0, tag: "split").count >= 2 })
        #expect(await onB.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.sendFailed" && $0["clientSequence"] == 700 && $0["error"]?["serverErrorCode"] == "TRY_AGAIN_LATER" } } },
                "\(onB.envelopes.withLock { $0.suffix(6) })")
        #expect(onB.envelopes.withLock { $0.filter { $0["type"] == "session.sendFailed" }.count } == 1,
                "messages that were answered are not failed: \(onB.envelopes.withLock { $0.filter { $0["type"] == "session.sendFailed" } })")
        try own.start()
        #expect(await onA.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.invalidated" && $0["sessionID"]?.stringValue == sessionID } } },
                "\(onA.envelopes.withLock { $0.suffix(6) })")
        #expect(!onB.has("session.invalidated") && !onC.has("session.invalidated"))

        _ = try await Self.joined(onA, sessionID)
        #expect(await Self.participants(onB, 3))
        await Self.send(onA, sessionID, tag: "merged", count: 3)
        #expect(await onB.wait(seconds: 20) { Self.heard($0, tag: "merged").count >= 3 }, "\(Self.heard(onB, tag: "merged"))")
        #expect(await onC.wait(seconds: 20) { Self.heard($0, tag: "merged").count >= 3 })
        #expect(Self.heard(onB, tag: "merged").map(\.sequence) == Self.heard(onC, tag: "merged").map(\.sequence))
    }

    /// A session started while its owner's nats-server has no route to the others' yet (a
    /// partition at the start: its announcement reaches nobody, and plain NATS keeps nothing):
    /// when the route comes, the owner hears the other nodes for the first time and sends them
    /// its copies, and their members hear `session.available` then and can join (N83). Before,
    /// they never heard of it: `anOwnerCutOffAlone…` failed whenever its session started within
    /// the second nats-server takes to retry a route (every time after another cluster test in
    /// the same process, stop 43).
    @Test func aSessionStartedWhileTheBusIsPartitionedIsAnnouncedWhenTheRouteComes() async throws {
        let (ownRoutePort, routePort) = (try PostgresCluster.freePort(), try PostgresCluster.freePort())
        func clusterBlock(routes: String) -> String {
            "server_name: tandem-test-own\ncluster { name: tandem, listen: \"127.0.0.1:\(ownRoutePort)\", no_advertise: true\(routes) }\n"
        }
        let config = try NATSServer.configFile(clusterBlock(routes: ""))
        let own = try NATSServer(arguments: ["--config", config])
        let cluster = try NodeCluster(nodes: 3, natsArguments: ["--cluster_name", "tandem", "--cluster", "nats://127.0.0.1:\(routePort)",
                                                                                 "--no_advertise"],
                                      nodeBus: [0: own.url])
        let people = try ["ada", "bob", "carol"].map { try cluster.person($0) }
        let conversation = try Self.conversation(cluster, people)
        var members: [StreamProbe] = []
        for (index, node) in cluster.nodes.enumerated() { members.append(try await StreamProbe.connect(node, as: people[index])) }
        let (onA, onB, onC) = (members[0], members[1], members[2])
        _ = try await Session.reply(onA, ["type": "conversation.activate", "conversationID": .string(conversation)])
        let activated = try await Session.reply(onA, ["type": "activity.activate", "activity": Session.activity()])
        let sessionID = try #require(activated["result"]?["session"]?["sessionID"]?.stringValue, "\(activated)")
        try await Task.sleep(for: .seconds(2))
        #expect(!onB.has("session.available") && !onC.has("session.available"), "no route yet, so nobody else heard of it")

        try clusterBlock(routes: ", routes: [\"nats://127.0.0.1:\(routePort)\"]").write(toFile: config, atomically: true, encoding: .utf8)
        own.reload()
        for probe in [onB, onC] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
                $0["type"] == "session.available" && $0["session"]?["sessionID"]?.stringValue == sessionID } } },
                    "\(probe.envelopes.withLock { $0.suffix(6) })")
        }
        for probe in members { _ = try await Self.joined(probe, sessionID) }
        #expect(await Self.participants(onA, 3), "\(onA.envelopes.withLock { $0.suffix(4) })")
        await Self.send(onB, sessionID, tag: "healed", count: 2)
        #expect(await onA.wait(seconds: 20) { Self.heard($0, tag: "healed").count >= 2 }, "\(Self.heard(onA, tag: "healed"))")
        #expect(onB.envelopes.withLock { $0.filter { $0["type"] == "session.available" }.count } == 1, "heard once: \(onB.all("session.available"))")
    }

    /// The owner paused (SIGSTOP) for longer than the silence: the others take the session over;
    /// when it runs again, the copy it kept loses to theirs (a higher generation, N70): its
    /// member hears `session.invalidated`, joins again through the same node, and everyone is
    /// in one copy with one numbering. Before, the resumed owner kept its copy and went on
    /// numbering, and the others heard both (stop 41's review).
    @Test func aPausedOwnersCopyGivesWayToTheOneTheOthersTookOver() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB, onC) = (members[0], members[1], members[2])
        #expect(await Self.participants(onB, 3))

        cluster.a.signal(SIGSTOP)
        // Sent to the paused owner before the takeover: queued for it, never numbered in its stale
        // copy when it resumes (N77); each gets one answer.
        for n in 801...803 {
            await onB.client.send(binary: Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: true, type: "chat",
                                                        payload: Array("during-\(n)".utf8)))
            // The owner's own member too: its frames wait in the owner's socket.
            await onA.client.send(binary: Session.frame(session: sessionID, clientSequence: UInt32(n), reliable: true, type: "chat",
                                                        payload: Array("during-\(n)".utf8)))
        }
        #expect(await Self.participants(onB, 2), "the others take the session over without the paused owner's member")
        cluster.a.signal(SIGCONT)
        #expect(await onA.wait(seconds: 20) { $0.envelopes.withLock { $0.contains {
            $0["type"] == "session.invalidated" && $0["sessionID"]?.stringValue == sessionID } } },
                "\(onA.envelopes.withLock { $0.suffix(6) })")
        _ = try await Self.joined(onA, sessionID)
        #expect(await Self.participants(onB, 3))
        await Self.send(onA, sessionID, tag: "back", count: 3)
        await Self.send(onB, sessionID, tag: "bob", count: 3)
        #expect(await onC.wait(seconds: 20) { Self.heard($0, tag: "back").count >= 3 && Self.heard($0, tag: "bob").count >= 3 })
        #expect(await onB.wait(seconds: 20) { Self.heard($0, tag: "back").count >= 3 })
        let onCOrder = (Self.heard(onC, tag: "back") + Self.heard(onC, tag: "bob")).map(\.sequence)
        #expect(Set(onCOrder).count == 6, "one numbering: \(onCOrder)")
        #expect(Self.heard(onB, tag: "back").map(\.sequence) == Self.heard(onC, tag: "back").map(\.sequence))
        #expect(!onB.has("session.invalidated") && !onC.has("session.invalidated"))
        #expect(Self.heard(onC, tag: "during").isEmpty, "the stale copy delivered nothing: \(Self.heard(onC, tag: "during"))")
        for probe in [onA, onB] {
            for n in 801...803 {
                let answers = probe.envelopes.withLock { $0.filter {
                    ($0["type"] == "session.sent" || $0["type"] == "session.sendFailed") && $0["clientSequence"]?.int64Value == Int64(n) } }
                #expect(answers.count == 1 && answers.first?["type"] == "session.sendFailed", "\(n): \(answers)")
            }
        }
        #expect(Self.heard(onB, tag: "during").isEmpty, "\(Self.heard(onB, tag: "during"))")
    }

    /// An owner paused just past the 3 s of silence: the nodes notice it at their own heartbeats,
    /// up to a second apart, so one may find it gone while the node chosen to take over hears it
    /// again first and takes nothing over. A node keeps the owner in its index until the
    /// successor says it took over (N79): meanwhile its members' messages are refused
    /// `TRY_AGAIN_LATER`, and once the owner is heard again they go to it. Before, such a node
    /// sent them to the successor for good, which answered `NOT_FOUND` (stop 42's review: 3 of
    /// 5 runs at 3.2 s), and during every takeover members of the third node heard `NOT_FOUND`.
    @Test func aPauseJustPastTheSilenceLeavesEveryMemberAbleToSend() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let (members, sessionID) = try await Self.oneMemberOnEachNode(cluster)
        let (onA, onB, onC) = (members[0], members[1], members[2])
        #expect(await Self.participants(onA, 3))
        func invalidations(_ probe: StreamProbe) -> Int {
            probe.envelopes.withLock { $0.filter { $0["type"] == "session.invalidated" }.count }
        }
        for round in 0..<2 {
            let invalidatedBefore = [onA, onB, onC].map(invalidations)
            cluster.a.signal(SIGSTOP)
            // Every 100 ms from both other nodes, through the pause and 3 s after it.
            let pause = round == 0 ? 3.2 : 3.5
            let started = Date()
            var n = UInt32(1000 * (round + 1))
            var resumed = false
            while Date().timeIntervalSince(started) < pause + 3 {
                if !resumed, Date().timeIntervalSince(started) >= pause {
                    cluster.a.signal(SIGCONT)
                    resumed = true
                }
                n += 1
                for probe in [onB, onC] {
                    await probe.client.send(binary: Session.frame(session: sessionID, clientSequence: n, reliable: true, type: "chat",
                                                                  payload: Array("r\(round)-\(n)".utf8)))
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            try await Task.sleep(for: .seconds(3))
            // A member whose copy lost (the owner's, after a takeover) joins again.
            for (index, probe) in [onA, onB, onC].enumerated() where invalidations(probe) > invalidatedBefore[index] {
                _ = try await Self.joined(probe, sessionID)
            }
            // Each member can send again now, whoever owns the session.
            for (index, probe) in [onA, onB, onC].enumerated() {
                let sequence = UInt32(9000 + 10 * round + index)
                await probe.client.send(binary: Session.frame(session: sessionID, clientSequence: sequence, reliable: true, type: "chat",
                                                              payload: Array("after-\(round)-\(index)".utf8)))
                #expect(await probe.wait(seconds: 10) { $0.envelopes.withLock { $0.contains {
                    $0["type"] == "session.sent" && $0["clientSequence"]?.int64Value == Int64(sequence) } } },
                        "round \(round), member \(index): \(probe.envelopes.withLock { $0.suffix(6) })")
            }
        }
        for probe in [onB, onC] {
            let notFound = probe.envelopes.withLock { $0.filter {
                $0["type"] == "session.sendFailed" && $0["error"]?["serverErrorCode"] == "NOT_FOUND" } }
            #expect(notFound.isEmpty, "a member that never left heard NOT_FOUND: \(notFound.prefix(3))")
        }
    }

    /// A node that has just started knows the live sessions of the others as soon as it serves
    /// (N72): a join through it at once succeeds. Before, the others heard of it at its first
    /// heartbeat, a second later, and such a join was refused `NOT_FOUND`.
    @Test func aNewNodeCanJoinLiveSessionsAsSoonAsItServes() async throws {
        let cluster = try NodeCluster(nodes: 1)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob")
        let conversation = try Self.conversation(cluster, [ada, bob])
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let sessionID = try await Self.startSession(onA, in: conversation, heardBy: [])
        _ = try await Self.joined(onA, sessionID)
        let fresh = try cluster.startNode()
        let onNew = try await StreamProbe.connect(fresh, as: bob)
        _ = try await Self.joined(onNew, sessionID)
        #expect(await Self.participants(onA, 2))
    }

    @Test func theJournalAndStagingWorkFromEveryNodeAndTheJournalSurvivesTakeover() async throws {
        let cluster = try NodeCluster(nodes: 3)
        let ada = try cluster.person("ada"), bob = try cluster.person("bob"), carol = try cluster.person("carol")
        let onA = try await StreamProbe.connect(cluster.a, as: ada)
        let onB = try await StreamProbe.connect(cluster.b, as: bob)
        let onC = try await StreamProbe.connect(cluster.c, as: carol)

        // A preview image uploaded on A; staged on A with Bob and Carol; staged again from B: the
        // same conversation and session, owned by A.
        let journal = "/journal/1/\(TestServer.container)/development"
        let preview = try cluster.a.request("POST", cluster.a.baseURL + journal + "/preview", body: Data("png".utf8), token: .some(ada.token))
        let image = try #require(preview.json["previewImage"], "\(preview.text)")
        let activity: JSONValue = ["identifier": "com.example.protocol", "payload": "{}",
                                   "metadata": ["type": "generic", "previewImage": image]]
        let staged = try await Session.reply(onA, ["type": "activity.stage", "activity": activity,
                                                   "people": [.string(bob.recordName), .string(carol.recordName)]])
        let sessionID = try #require(staged["result"]?["session"]?["sessionID"]?.stringValue, "\(staged)")
        let conversation = try #require(staged["result"]?["conversationID"]?.stringValue)
        for probe in [onB, onC] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "session.available" } } })
        }
        let again = try await Session.reply(onB, ["type": "activity.stage", "activity": activity,
                                                  "people": [.string(ada.recordName), .string(carol.recordName)]])
        #expect(again["result"]?["conversationID"]?.stringValue == conversation, "\(again)")
        #expect(again["result"]?["session"]?["sessionID"]?.stringValue == sessionID, "one session per conversation: \(again)")

        // The preview is shown to a member on C, whose node does not own the session.
        let checksum = try #require(image["checksum"]?.stringValue)
        let shown = try cluster.c.request("GET", cluster.c.baseURL + journal + "/preview/\(checksum)", token: .some(carol.token))
        #expect(shown.status == 200 && shown.text == "png", "\(shown.status) \(shown.text)")

        _ = try await Self.joined(onA, sessionID)
        let bobID = try await Self.joined(onB, sessionID)
        let carolID = try await Self.joined(onC, sessionID)

        // The console on B lists the session A owns, with its three participants (N38).
        let added = try cluster.b.command(["admin", "add", "root@example.com", "--password-stdin", "--store", cluster.store],
                                          input: ConsoleTests.password + "\n")
        #expect(added.status == 0, "\(added.errors)")
        let console = ConsoleClient(cluster.b)
        #expect(try console.signIn("root@example.com", ConsoleTests.password).status == 303)
        let page = try await ConsoleLiveTests.page(console, "/console/containers/\(TestServer.container)/sharedwithyou/development") {
            ConsoleLiveTests.rows($0, table: "live-sessions").first { $0.contains(sessionID) }?.contains(carol.recordName + " since") == true
        }
        let row = try #require(ConsoleLiveTests.rows(page, table: "live-sessions").first { $0.contains(sessionID) }, "\(page)")
        #expect(row.contains("\(ada.recordName) since") && row.contains("\(bob.recordName) since"), "\(row)")
        #expect(row.contains("counted by another node"), "\(row)")

        // Uploaded on C (not the owner): every participant hears it; downloaded on B.
        let base = "/journal/1/\(TestServer.container)/development/\(sessionID)"
        let upload = try cluster.c.request("POST", cluster.c.baseURL + base + "?participantID=\(carolID)", body: Data("from C".utf8),
                                           token: .some(carol.token))
        #expect(upload.status == 200, "\(upload.text)")
        let attachment = try #require(upload.json["attachment"]?["id"]?.stringValue, "\(upload.text)")
        for probe in [onA, onB, onC] {
            #expect(await probe.wait(seconds: 20) { $0.envelopes.withLock { $0.contains { $0["type"] == "journal.attachments"
                && $0["attachments"]?.arrayValue?.first?["id"]?.stringValue == attachment } } })
        }
        for (node, person) in [(cluster.b, bob), (cluster.a, ada), (cluster.c, carol)] {
            let download = try node.request("GET", node.baseURL + base + "/\(attachment)", token: .some(person.token))
            #expect(download.status == 200 && download.text == "from C", "\(download.status) \(download.text)")
        }
        // Still refused before the body for a participant ID that is not the caller's, on any node.
        let forged = try cluster.b.request("POST", cluster.b.baseURL + base + "?participantID=\(carolID)", body: Data("x".utf8),
                                           token: .some(bob.token))
        #expect(forged.status == 404, "\(forged.text)")

        // The owner dies: the journal and its bytes are still there for the survivors.
        cluster.a.kill()
        #expect(await Self.participants(onB, 2), "\(onB.envelopes.withLock { $0.suffix(3) })")
        let after = try cluster.b.request("GET", cluster.b.baseURL + base + "/\(attachment)", token: .some(bob.token))
        #expect(after.status == 200 && after.text == "from C", "\(after.status) \(after.text)")
        let second = try cluster.b.request("POST", cluster.b.baseURL + base + "?participantID=\(bobID)", body: Data("from B".utf8),
                                           token: .some(bob.token))
        #expect(second.status == 200, "\(second.text)")
        #expect(await onC.wait(seconds: 20) { $0.envelopes.withLock { $0.last { $0["type"] == "journal.attachments" }?["attachments"]?
            .arrayValue?.count == 2 } })
        let rejoin = try await StreamProbe.connect(cluster.c, as: ada)
        let joined = try await Session.reply(rejoin, ["type": "session.join", "sessionID": .string(sessionID)])
        #expect(joined["result"]?["attachments"]?.arrayValue?.count == 2, "\(joined)")
    }
}

