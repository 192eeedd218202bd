import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemStore

/// Group sessions across nodes (issue 20 item 3; decisions N19–N22): the node that activates a
/// session owns it and keeps all of its state (participants, sequence, state store, journal
/// index, rate buckets) exactly as a single node does. Other nodes keep an index of the live
/// sessions they heard announced, forward their connections' envelopes and messenger frames for
/// a session to its owner, and hand the owner's deliveries to their connections in the order
/// published: the owner is the sequencer, admission and rate limiting happen in one place.
extension SessionHub {
    /// A live session owned by another node, as this node knows it from the bus.
    struct RemoteSession: Sendable {
        var owner: String
        var container: String
        var environment: Environment
        var conversationID: String
        var audience: Set<String>
        /// `{sessionID, conversationID, activity, initiatorConnectionID}`.
        var json: JSONValue
        /// Its state as the owner replicates it (N33); nil until the first copy is heard.
        var replica: SessionReplica? = nil
        /// When this node found the owner silent and another node is to take the session over
        /// (ms of `DispatchTime`, N79): until that node says it did, or the owner is heard again,
        /// messages for the session are refused `TRY_AGAIN_LATER`; after `orphanTimeout` the
        /// session ends for this node's members.
        var orphanedAt: UInt64? = nil
    }

    /// Starts hearing the other nodes' session traffic. Own events are skipped: this node
    /// already acted on them.
    func connect(to bus: EventBus) {
        bus.subscribe { [weak self] delivery in
            guard let self else { return }
            if case .missed = delivery {
                // After a reconnect every node gets a fresh silence window (N63): a node not
                // heard while this one was cut off is not thereby gone.
                self.registry.withLock { registry in
                    let now = Self.now()
                    for node in registry.lastHeard.keys { registry.lastHeard[node] = now }
                }
                // The others may have missed changes to this node's sessions meanwhile (N79).
                self.publishReplicas()
                self.resendDeclarations(wanting: nil)
                return self.leaveRemoteSessionsAfterGap()
            }
            guard case .event(let event) = delivery, case .session(let traffic) = event.body,
                  event.origin != bus.node else { return }
            self.heard(traffic, from: event.origin, environment: Environment(rawValue: traffic.environment))
        }
    }

    /// This node may have missed bus messages (its bus reconnected, or fell behind): its members
    /// of sessions other nodes own may have missed reliable messages, which NATS does not keep
    /// for a node that is away, and nothing would tell them (stop 42's review: a 0.3 s reset of
    /// one node's NATS connection lost 6–8 acknowledged messages for its member, silently). So
    /// they leave those sessions (the owner hears a `session.leave` for each) and hear
    /// `session.invalidated` (`error`), as after a takeover they were not part of; they may join
    /// again at once, and get the session's state as a late joiner does (N81). Members of the
    /// sessions this node owns missed nothing: the owner numbers and delivers their messages.
    func leaveRemoteSessionsAfterGap() {
        guard let me = bus?.node else { return }
        let leaving = registry.withLock { registry -> [(client: StreamClient, session: UUID, owner: String)] in
            var leaving: [(client: StreamClient, session: UUID, owner: String)] = []
            for (id, remote) in registry.remote {
                guard let replica = remote.replica else { continue }
                for participant in replica.participants where participant.node == me {
                    guard let client = registry.clients[participant.connection], !(client.connection is RemotePeer) else { continue }
                    registry.clients[participant.connection]?.forwardedTo.insert(remote.owner)
                    leaving.append((client, id, remote.owner))
                }
            }
            return leaving
        }
        for (client, sessionID, owner) in leaving {
            // Published even if the bus is still settling: libnats sends it once it can, before
            // the member's join again, which goes the same way.
            _ = publishRequest(to: owner, from: client.connection.id, client: client,
                               envelope: JSONWriter.string(["type": "session.leave", "sessionID": .string(sessionID.uuidString)]), frame: nil)
            client.connection.send(text: JSONWriter.string(["type": "session.invalidated", "sessionID": .string(sessionID.uuidString),
                                                            "reason": .string(InvalidationReason.error.rawValue)]))
        }
    }

    /// Every second: tells the other nodes this one is alive, and treats a node not heard for
    /// `silence` seconds as gone (N24), but only while this node's bus is connected and counting
    /// from its last reconnect (N63): its sessions are taken over by the surviving node with
    /// the lowest ID (N33), or, without a replica here, end for this node's connections
    /// (`session.invalidated`, `error`) and leave the index; its connections leave the sessions
    /// this node owns.
    func startHeartbeat(silence: UInt64 = silenceMilliseconds / 1000) {
        registry.withLock { $0.lastTick = Self.now() }
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "tandem-session-heartbeat"))
        timer.schedule(deadline: .now() + 1, repeating: 1)
        timer.setEventHandler { [weak self] in
            guard let self, let bus = self.bus else { return timer.cancel() }
            bus.publish(.session(SessionTraffic(container: "", environment: "", kind: .heartbeat)))
            let now = Self.now()
            self.registry.withLock { registry in
                defer { registry.lastTick = now }
                // A tick over half a second late: this node was not running (stopped, or starved)
                // for that long, and heard nobody because it listened to nobody. Silence counts
                // only while this node runs (N69).
                guard now - registry.lastTick > 1500 else { return }
                registry.resumedUntil = max(registry.resumedUntil, now + Self.resumeCaution)
                let lost = now - registry.lastTick - 1000
                for (node, heard) in registry.lastHeard { registry.lastHeard[node] = min(now, heard + lost) }
                // Nor does the wait for answers (N75): the answers may be queued for this node.
                for (id, client) in registry.clients where !client.awaiting.isEmpty || !client.awaitingReplies.isEmpty {
                    for (sequence, entry) in client.awaiting {
                        registry.clients[id]!.awaiting[sequence] = (entry.session, min(now, entry.at + lost))
                    }
                    for (key, entry) in client.awaitingReplies {
                        registry.clients[id]!.awaitingReplies[key] = (entry.id, min(now, entry.at + lost))
                    }
                }
            }
            let connected = bus.transport?.isConnected != false
            self.expireAwaited(now: now)
            self.forgetSilentNodes(olderThan: now - silence * 1000, connected: connected)
        }
        timer.resume()
    }

    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds / 1_000_000 }

    /// Says this node is here as soon as its bus runs, before it serves (N72): the other nodes
    /// answer a node they hear for the first time with copies of the sessions they own (N33)
    /// and their connections' declarations (N57). Before, they heard it at its first heartbeat,
    /// a second later, and a join sent to the new node in that second was refused `NOT_FOUND`.
    func announce() {
        bus?.publish(.session(SessionTraffic(container: "", environment: "", kind: .heartbeat)))
    }

    /// Waits until another node has been heard, at most `seconds` (N84): called after
    /// `announce()` and before the HTTP server binds, so the copies of the sessions the others
    /// own, which they send a node they hear for the first time, are here before the first
    /// join. Before, `announce()` alone left a race: a join through a node that had just started
    /// could arrive before the copies and was answered `NOT_FOUND`. A node alone on its bus
    /// (the first one started) waits the whole `seconds`; without a bus nothing is waited for.
    func awaitOtherNodes(seconds: Double) {
        guard bus?.transport != nil else { return }
        let deadline = Date(timeIntervalSinceNow: seconds)
        while registry.withLock({ $0.lastHeard.isEmpty }), Date() < deadline { usleep(10_000) }
        // The node heard first may still be sending its copies, one message per session.
        usleep(50_000)
    }

    /// Tells the other nodes this one is stopping (N65), before its HTTP server drains, while
    /// the bus still runs: they take its sessions over at once, and this node stops owning them
    /// (its own members' frames find no session until their connections close, and they join
    /// again through another node), so no message is numbered by two owners.
    func leave() {
        guard let bus, bus.transport != nil else { return }
        bus.publish(.session(SessionTraffic(container: "", environment: "", kind: .leaving)))
        registry.withLock { registry in
            registry.sessions.removeAll()
            registry.leaving = true
        }
    }

    /// How long a node that resumed from a pause refuses messenger frames for its own sessions
    /// (ms, N77): time for the others' copies to reach it (N70).
    static let resumeCaution: UInt64 = 2000

    /// Frames one connection may have waiting for an answer from another node; past it, more
    /// are forwarded without being waited for (N75).
    static let awaitedLimit = 4096
    /// How long a frame forwarded to another node waits for its answer before its sender is told
    /// it has none (ms, N75).
    static let answerTimeout: UInt64 = 5000

    /// The client sequence a `session.sent` or `session.sendFailed` answers; nil for other text.
    static func answeredSequence(_ text: String) -> UInt32? {
        guard text.utf8.count < 4096, text.contains("\"session.sent\"") || text.contains("\"session.sendFailed\""),
              let envelope = try? JSONParser.parse(text),
              envelope["type"] == "session.sent" || envelope["type"] == "session.sendFailed",
              let sequence = envelope["clientSequence"]?.int64Value else { return nil }
        return UInt32(truncatingIfNeeded: sequence)
    }

    /// The `id` (as JSON text) a `reply` envelope answers; nil for other text.
    static func repliedID(_ text: String) -> String? {
        guard text.hasPrefix(#"{"type":"reply""#), let envelope = try? JSONParser.parse(text), let id = envelope["id"] else { return nil }
        return JSONWriter.string(id)
    }

    /// Frames forwarded `answerTimeout` ago with no answer since (the owner fell silent, was cut
    /// off, or the bus lost the frame or the answer): their senders hear `session.sendFailed`
    /// `TRY_AGAIN_LATER`, saying the message may or may not have been delivered (N75). Before,
    /// they heard nothing.
    func expireAwaited(now: UInt64) {
        let unanswered = registry.withLock { registry -> [(any SessionPeer, JSONValue)] in
            var unanswered: [(any SessionPeer, JSONValue)] = []
            for (id, client) in registry.clients where !client.awaitingReplies.isEmpty {
                for (key, entry) in client.awaitingReplies where now > entry.at && now - entry.at >= Self.answerTimeout {
                    registry.clients[id]!.awaitingReplies.removeValue(forKey: key)
                    unanswered.append((client.connection, entry.id))
                }
            }
            return unanswered
        }
        for (connection, id) in unanswered {
            _ = connection.send(text: JSONWriter.string(["type": "reply", "id": id, "error": .object([
                "serverErrorCode": .string(ServerErrorCode.tryAgainLater.rawValue),
                "reason": .string("no answer from the node that runs the session within \(Self.answerTimeout / 1000) s; retry")])]))
        }
        let expired = registry.withLock { registry -> [(any SessionPeer, UInt32, UUID)] in
            var expired: [(any SessionPeer, UInt32, UUID)] = []
            for (id, client) in registry.clients where !client.awaiting.isEmpty || !client.expired.isEmpty {
                // `at` may be a moment after `now` (taken before the lock): no wrap-around.
                for (sequence, entry) in client.awaiting where now > entry.at && now - entry.at >= Self.answerTimeout {
                    registry.clients[id]!.awaiting.removeValue(forKey: sequence)
                    registry.clients[id]!.expired[sequence] = now
                    expired.append((client.connection, sequence, entry.session))
                }
                registry.clients[id]!.expired = registry.clients[id]!.expired.filter { now < $0.value + 60_000 }
            }
            return expired
        }
        for (connection, sequence, session) in expired {
            _ = connection.send(text: JSONWriter.string([
                "type": "session.sendFailed", "sessionID": .string(session.uuidString), "clientSequence": .int(Int64(sequence)),
                "error": .object(["serverErrorCode": .string(ServerErrorCode.tryAgainLater.rawValue),
                                  "reason": .string("no answer from the node that runs the session within \(Self.answerTimeout / 1000) s: "
                                                    + "the message may or may not have been delivered")])]))
        }
    }

    /// How long the members dropped with a silent node are remembered, to be told when it is
    /// heard again (ms).
    static let droppedMemory: UInt64 = 10 * 60 * 1000
    /// The silence after which a node is taken for gone (ms, N24).
    static let silenceMilliseconds: UInt64 = 3000
    /// How long a node heard again waits before telling its members dropped for its silence
    /// (ms, N69): long enough for the copies of sessions to be exchanged, so that a member of a
    /// copy that lost to another (N70) is not told twice, nor one the other copy kept told at all.
    static let tellDelay: UInt64 = 2000

    /// How long a session whose owner fell silent waits for the node chosen to take it over to
    /// say it did, before it ends for this node's members (ms, N79): that node notices the
    /// silence on its own heartbeat, at most a second after this one, and announces at once.
    static let orphanTimeout: UInt64 = 5000

    /// `connected`: whether this node's bus is connected. Cut off from the bus, a node cannot
    /// tell a dead node from its own silence: had every node taken over what it could not hear,
    /// a bus outage longer than `silence` would leave each session an owner per node (N63). So
    /// while cut off, only the silent nodes' declarations stop counting (they come back with the
    /// bus, N57); sessions and their members are left as they are, and the silence is counted
    /// again from the reconnect.
    private func forgetSilentNodes(olderThan cutoff: UInt64, connected: Bool) {
        guard let me = bus?.node else { return }
        let (sessions, taken, peers, declarations) = registry.withLock { registry
            -> ([(UUID, RemoteSession)], [RemoteSession], [any SessionPeer], [Declaration]) in
            // A stopping node hands nothing over to itself; the others take its sessions (N69).
            guard !registry.leaving else { return ([], [], [], []) }
            let now = Self.now()
            registry.dropped = registry.dropped.compactMapValues { members in
                let kept = members.filter { now - $0.at < Self.droppedMemory }
                return kept.isEmpty ? nil : kept
            }
            // Sessions whose successor never said it took them over (it had no copy, or it heard
            // the owner all along and the owner then died): they end here (N79).
            var abandoned: [(UUID, RemoteSession)] = []
            for (id, remote) in registry.remote {
                guard let orphanedAt = remote.orphanedAt, now - orphanedAt > Self.orphanTimeout else { continue }
                abandoned.append((id, remote))
                registry.remote.removeValue(forKey: id)
            }
            let gone = Set(registry.lastHeard.filter { $0.value < cutoff }.keys)
            guard !gone.isEmpty else { return (abandoned, [], [], []) }
            guard connected else { return (abandoned, [], [], Self.forgetDeclarations(of: gone, in: &registry)) }
            for node in gone { registry.lastHeard.removeValue(forKey: node) }
            let (ended, taken) = Self.succeed(gone, in: &registry, node: me, now: now)
            let sessions = abandoned + ended
            let peers = registry.clients.values.compactMap { ($0.connection as? RemotePeer).flatMap { gone.contains($0.node) ? $0 : nil } }
            for case let peer as RemotePeer in peers {
                registry.proxies.removeValue(forKey: "\(peer.node):\(peer.connection)")
                // Remembered, so that the node, if it was only silent, can tell its members (N69).
                if let client = registry.clients[peer.id], !client.joined.isEmpty, !registry.departed.contains(peer.node) {
                    registry.dropped[peer.node, default: []].append(
                        DroppedMember(connection: peer.connection, sessions: Array(client.joined.keys), container: client.container,
                                      environment: client.environment, at: now))
                }
            }
            return (sessions, taken, peers, Self.forgetDeclarations(of: gone, in: &registry))
        }
        for declaration in declarations {
            groupStateChanged(for: [declaration.user], container: declaration.container, environment: declaration.environment)
        }
        for (id, session) in sessions {
            let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(id.uuidString),
                                          "reason": .string(InvalidationReason.error.rawValue)])
            for connection in connections(of: session.audience, container: session.container, environment: session.environment) {
                connection.send(text: text)
            }
        }
        for peer in peers { disconnected(peer) }
        for session in taken { takeOver(session) }
    }

    private func heard(_ traffic: SessionTraffic, from origin: String, environment: Environment?) {
        guard let bus else { return }
        let (isNew, departed, dropped) = registry.withLock { registry -> (Bool, Bool, [DroppedMember]) in
            // A node that said it is stopping may still publish what it did meanwhile (a takeover
            // it began before it heard another node leave too): none of it counts (N69).
            guard !registry.departed.contains(origin) else { return (false, true, []) }
            let now = Self.now()
            // The heartbeat is over 1.5 s late: this node was stopped (or starved) and is working
            // through what queued meanwhile, before it can know whether its sessions were taken
            // over (N77).
            if now - registry.lastTick > 1500 { registry.resumedUntil = max(registry.resumedUntil, now + Self.resumeCaution) }
            let isNew = registry.lastHeard.updateValue(now, forKey: origin) == nil
            if isNew {
                // The owner this node took for gone runs after all (a pause just over the silence
                // that the successor did not see): its sessions are routed to it again (N79).
                for (id, remote) in registry.remote where remote.owner == origin && remote.orphanedAt != nil {
                    registry.remote[id]?.orphanedAt = nil
                }
            }
            return (isNew, false, isNew ? registry.dropped.removeValue(forKey: origin) ?? [] : [])
        }
        guard !departed else { return }
        if isNew {
            publishReplicas()
            resendDeclarations(wanting: origin)
            tellDropped(dropped, on: origin)
        }
        if case .declarationsWanted(let from) = traffic.kind {
            // Asked by a node that heard this one for the first time, or again after finding it
            // silent, or after its bus reconnected: it may have dropped this node's sessions
            // from its index (N79) or missed changes to them, so it gets whole copies too.
            if from == nil || from == bus.node {
                publishDeclarations()
                // At most every 2 s: a copy the bus refuses makes every node miss an event and
                // ask again, and copies answering each request made a storm (stop 42's review).
                let due = registry.withLock { registry in
                    let now = Self.now()
                    guard now - registry.copiesRepublishedAt >= 2000 else { return false }
                    registry.copiesRepublishedAt = now
                    return true
                }
                if due { publishReplicas() }
            }
            return
        }
        if case .leaving = traffic.kind {
            // Gone now, not after 3 s of silence: its sessions are taken over at once (N65).
            registry.withLock { registry in
                registry.lastHeard[origin] = 0
                registry.departed.insert(origin)
                registry.dropped.removeValue(forKey: origin)
            }
            return forgetSilentNodes(olderThan: 1, connected: true)
        }
        guard let environment else { return }
        switch traffic.kind {
        case .heartbeat, .declarationsWanted, .leaving:
            return
        case .deliver(let receivers, let text, let binary, let droppable):
            guard let ids = receivers[bus.node] else { return }
            let answered = text.flatMap(Self.answeredSequence)
            let replied = text.flatMap(Self.repliedID)
            let connections = registry.withLock { registry in
                ids.compactMap { id -> (any SessionPeer)? in
                    if let replied { registry.clients[id]?.awaitingReplies.removeValue(forKey: replied) }
                    if let answered, registry.clients[id]?.awaiting.removeValue(forKey: answered) == nil,
                       registry.clients[id]?.expired.removeValue(forKey: answered) != nil {
                        return nil   // its sender was already told it had no answer (N75)
                    }
                    return registry.clients[id]?.connection
                }
            }
            let bytes = binary.map { [UInt8]($0) }
            for connection in connections {
                if let text { connection.send(text: text, droppable: droppable) }
                if let bytes { connection.send(binary: bytes, droppable: droppable) }
            }
        case .audience(let users, let text, let except):
            for connection in connections(of: users, container: traffic.container, environment: environment)
            where !except.contains("\(bus.node):\(connection.id)") {
                connection.send(text: text)
            }
        case .announced(let owner, let sessionID, let conversationID, let audience, let json):
            registry.withLock { registry in
                // This node runs it (it took it over): another node's late announcement is stale.
                guard registry.sessions[sessionID] == nil else { return }
                var replica = registry.remote[sessionID]?.replica
                replica?.audience = audience
                if let activity = json["activity"] { replica?.activity = activity }
                registry.remote[sessionID] = RemoteSession(owner: owner, container: traffic.container, environment: environment,
                                                           conversationID: conversationID, audience: audience, json: json, replica: replica)
            }
        case .replica(let owner, let replica):
            heard(replica: replica, owner: owner, container: traffic.container, environment: environment)
        case .replicate(let sessionID, let change):
            // Only the owner's changes: a losing copy's (N70) would spoil the winner's replica.
            registry.withLock { registry in
                guard registry.remote[sessionID]?.owner == origin else { return }
                registry.remote[sessionID]?.replica?.apply(change)
            }
        case .attach(let owner, let sessionID, let participantID, let user, let attachment):
            guard owner == bus.node else { return }
            attach(attachment, sessionID: sessionID, participantID: participantID, user: user)
        case .declared(let connection, let user, let conversations):
            heard(declared: conversations, connection: connection, user: user, from: origin, container: traffic.container,
                  environment: environment)
        case .ended(let sessionID):
            registry.withLock { _ = $0.remote.removeValue(forKey: sessionID) }
        case .request(let owner, let connection, let user, let declared, let envelope, let frame):
            guard owner == bus.node else { return }
            let peer = proxy(node: origin, connection: connection, user: user, declared: declared,
                             container: traffic.container, environment: environment)
            if let frame { receive([UInt8](frame), on: peer) }
            if let envelope, let body = try? JSONParser.parse(Array(envelope.utf8)), let type = body["type"]?.stringValue {
                handle(type, body, on: peer)
            }
        case .disconnected(let owner, let connection):
            guard owner == bus.node,
                  let id = registry.withLock({ $0.proxies["\(origin):\(connection)"] }),
                  let peer = registry.withLock({ $0.clients[id]?.connection }) else { return }
            registry.withLock { _ = $0.proxies.removeValue(forKey: "\(origin):\(connection)") }
            disconnected(peer)
        }
    }

    /// A node heard again after this node's sessions dropped its members for its silence (a
    /// pause, or a bus cut that reached only it): those members hear `session.invalidated`
    /// (`error`), where they went on thinking they were in the session until a message was
    /// refused `NOT_FOUND` (N69). They may join again.
    private func tellDropped(_ members: [DroppedMember], on node: String) {
        guard bus != nil, !members.isEmpty else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int(Self.tellDelay))) { [weak self] in
            self?.tell(members, on: node)
        }
    }

    /// `tellDropped`'s second half: only for sessions this node still runs, to members it has
    /// not taken back meanwhile.
    private func tell(_ members: [DroppedMember], on node: String) {
        guard let bus else { return }
        for member in members {
            let receivers = [node: [member.connection]]
            let sessions = registry.withLock { registry in
                member.sessions.filter { id in
                    guard let session = registry.sessions[id] else { return false }
                    return !session.state.withLock { state in
                        state.ended || state.participants.contains { ($0.connection as? RemotePeer)?.node == node
                            && ($0.connection as? RemotePeer)?.connection == member.connection }
                    }
                }
            }
            for sessionID in sessions {
                let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(sessionID.uuidString),
                                              "reason": .string(InvalidationReason.error.rawValue)])
                bus.publish(.session(SessionTraffic(container: member.container, environment: member.environment.rawValue,
                                                    kind: .deliver(receivers: receivers, text: text, binary: nil, droppable: false))))
            }
        }
    }

    /// The stand-in for another node's connection: made on its first request, its declared
    /// conversations refreshed on each.
    private func proxy(node: String, connection: UInt64, user: String, declared: [String], container: String,
                       environment: Environment) -> any SessionPeer {
        registry.withLock { registry in
            Self.proxy(in: &registry, node: node, connection: connection, user: user, declared: declared, container: container,
                       environment: environment, bus: bus!)
        }
    }

    /// The stand-in, made or found with the registry's lock held; `declared` nil keeps what it had.
    static func proxy(in registry: inout Registry, node: String, connection: UInt64, user: String, declared: [String]?,
                      container: String, environment: Environment, bus: EventBus) -> any SessionPeer {
        let key = "\(node):\(connection)"
        if let id = registry.proxies[key], registry.clients[id] != nil {
            if let declared { registry.clients[id]!.declared = declared }
            return registry.clients[id]!.connection
        }
        registry.nextProxy += 1
        let peer = RemotePeer(id: registry.nextProxy, node: node, connection: connection, bus: bus, container: container,
                              environment: environment.rawValue)
        registry.proxies[key] = peer.id
        registry.clients[peer.id] = StreamClient(connection: peer, user: user, container: container, environment: environment,
                                                 declared: declared ?? [])
        return peer
    }

    /// The owner to forward `envelope` or `frame` to, when it addresses a session another node
    /// owns: by `sessionID`, or, for `activity.activate`, the conversation's live session.
    func remoteOwner(ofSession sessionID: UUID?, conversation: String?, client: StreamClient) -> String? {
        registry.withLock { registry in
            if let sessionID {
                guard registry.sessions[sessionID] == nil, let remote = registry.remote[sessionID],
                      remote.container == client.container, remote.environment == client.environment else { return nil }
                return remote.owner
            }
            guard let conversation, !registry.sessions.values.contains(where: {
                $0.conversationID == conversation && $0.container == client.container && $0.environment == client.environment
            }) else { return nil }
            return registry.remote.values.first {
                $0.conversationID == conversation && $0.container == client.container && $0.environment == client.environment
            }?.owner
        }
    }

    /// Sends what one of this node's connections addressed to a session's owner.
    /// - Throws: `TRY_AGAIN_LATER` when the bus cannot carry it now (`ownerUnreachable`).
    /// `replyID`: the envelope's `id`, whose `reply` this node then waits for (N75).
    func forward(to owner: String, from connection: any SessionPeer, envelope: String?, frame: [UInt8]?,
                 replyID: JSONValue? = nil) throws(CloudKitError) {
        if let refusal = ownerUnreachable() { throw refusal }
        if registry.withLock({ registry in registry.remote.values.contains { $0.owner == owner && $0.orphanedAt != nil } }) {
            throw Self.moving
        }
        guard let client = registry.withLock({ registry -> StreamClient? in
            registry.clients[connection.id]?.forwardedTo.insert(owner)
            if let replyID, replyID != .null, (registry.clients[connection.id]?.awaitingReplies.count ?? 0) < Self.awaitedLimit {
                registry.clients[connection.id]?.awaitingReplies[JSONWriter.string(replyID)] = (replyID, Self.now())
            }
            return registry.clients[connection.id]
        }) else { return }
        guard publishRequest(to: owner, from: connection.id, client: client, envelope: envelope, frame: frame) else {
            throw Self.unreachable
        }
    }

    /// Where a request for another node's session goes while this node's bus is disconnected:
    /// refused at once, `TRY_AGAIN_LATER` with `retryAfter` 1, rather than queued for a
    /// reconnect that may never bring an answer (the sender then heard neither `session.sent`
    /// nor `session.sendFailed`: stop 40's review). Nothing was delivered, so a retry cannot
    /// deliver a message twice. nil while connected (or with no transport).
    func ownerUnreachable() -> CloudKitError? {
        bus?.transport?.isConnected == false ? Self.unreachable : nil
    }

    /// Where a request for a session whose owner this node found silent goes until another node
    /// says it took the session over, or the owner is heard again (N79): refused at once,
    /// `TRY_AGAIN_LATER`, rather than sent to a node that may be dead, or to a successor that has
    /// not taken it over (it answered `NOT_FOUND`, and a node that had moved its route there while
    /// the successor went on hearing the owner kept it there for good: stop 42's review).
    static var moving: CloudKitError {
        var error = CloudKitError(.tryAgainLater, "the node that ran the session is not answering and another node is taking it "
                                  + "over; nothing was sent, retry in a moment")
        error.retryAfter = 1
        return error
    }

    /// The owner's refusal of a reliable frame for members on other nodes while its bus is down (N78).
    static var busDown: CloudKitError {
        var error = CloudKitError(.tryAgainLater, "this node cannot reach the other nodes of the session now (its event bus is "
                                  + "reconnecting); nothing was sent, retry in a moment")
        error.retryAfter = 1
        return error
    }

    private static var unreachable: CloudKitError {
        var error = CloudKitError(.tryAgainLater, "this node cannot reach the node that runs the session now (its event bus is "
                                  + "reconnecting); nothing was sent, retry in a moment")
        error.retryAfter = 1
        return error
    }

    /// How a messenger frame of one of this node's connections is handled (`forwardFrame`).
    enum FrameRoute {
        /// This node owns the session, or no node is known to: it checks the frame itself.
        case local
        /// Sent to the owner, which checks, numbers and delivers it.
        case forwarded
        /// Another node owns it and the bus cannot carry the frame now: refused with this.
        case refused(CloudKitError)
    }

    /// A messenger frame for `sessionID` from one of this node's connections: forwarded to the
    /// session's owner when another node owns it, else left to this node. One look-up under the
    /// registry's lock per frame: on a node forwarding many members' frames, that lock was the
    /// profile's top entry (decisions N52).
    /// `awaiting`: the frame's client sequence when it asks for an answer (`session.sent` or
    /// `session.sendFailed`), which this node then waits for (N75).
    func forwardFrame(_ bytes: [UInt8], session sessionID: UUID, from connection: any SessionPeer, awaiting: UInt32? = nil) -> FrameRoute {
        let connected = bus?.transport?.isConnected != false
        var orphaned = false
        let route = registry.withLock { registry -> (owner: String, client: StreamClient)? in
            guard registry.sessions[sessionID] == nil, let remote = registry.remote[sessionID],
                  let client = registry.clients[connection.id], remote.container == client.container,
                  remote.environment == client.environment else { return nil }
            orphaned = remote.orphanedAt != nil
            if orphaned { return (remote.owner, client) }
            if connected, let awaiting, client.awaiting.count < Self.awaitedLimit {
                registry.clients[connection.id]?.awaiting[awaiting] = (sessionID, Self.now())
            }
            guard client.forwardedTo.contains(remote.owner) else {
                registry.clients[connection.id]?.forwardedTo.insert(remote.owner)
                return registry.clients[connection.id].map { (remote.owner, $0) }
            }
            return (remote.owner, client)
        }
        guard let route else { return .local }
        if orphaned { return .refused(Self.moving) }
        if let refusal = ownerUnreachable() { return .refused(refusal) }
        guard publishRequest(to: route.owner, from: connection.id, client: route.client, envelope: nil, frame: bytes) else {
            return .refused(Self.unreachable)
        }
        return .forwarded
    }

    /// False when the bus dropped it (its outbox is full, or it is too large for the bus).
    private func publishRequest(to owner: String, from connection: UInt64, client: StreamClient, envelope: String?, frame: [UInt8]?) -> Bool {
        bus?.publish(.session(SessionTraffic(container: client.container, environment: client.environment.rawValue,
                                             kind: .request(owner: owner, connection: connection, user: client.user,
                                                            declared: client.declared, envelope: envelope,
                                                            frame: frame.map { Data($0) })))) ?? false
    }

    /// Tells the other nodes that `session` is live (or its activity changed).
    func publishIndex(_ session: LiveSession) {
        guard let bus else { return }
        let (audience, json) = session.state.withLock { ($0.audience, session.json($0.activity)) }
        bus.publish(.session(SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                            kind: .announced(owner: bus.node, sessionID: session.id, conversationID: session.conversationID,
                                                             audience: audience, session: json))))
    }

    /// Tells the other nodes that `session` ended.
    func publishEnded(_ session: LiveSession) {
        bus?.publish(.session(SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                             kind: .ended(sessionID: session.id))))
    }

    /// `text` for the connections of `users` on the other nodes, except `reached` (participants
    /// the owner already sent it to).
    func publishAudience(_ session: LiveSession, users: Set<String>, text: String, reached: [any SessionPeer]) {
        let except = Set(reached.compactMap { peer in (peer as? RemotePeer).map { "\($0.node):\($0.connection)" } })
        bus?.publish(.session(SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                             kind: .audience(users: users, text: text, except: except))))
    }

    /// Another node's live sessions that `user` hears of.
    func remoteSessions(visibleTo user: String, container: String, environment: Environment) -> [JSONValue] {
        registry.withLock { registry in
            registry.remote.values.filter { $0.container == container && $0.environment == environment && $0.audience.contains(user) }
                .map(\.json)
        }
    }

    /// Membership changes for sessions other nodes own: the index's audience follows, and this
    /// node's connections of a removed member hear `conversationEnded` (G10).
    func remoteMembershipChanged(_ change: MembershipChange) {
        let ended = registry.withLock { registry -> [UUID] in
            var touched: [UUID] = []
            for (id, remote) in registry.remote where remote.conversationID == change.conversationID
                && remote.container == change.container && remote.environment == change.environment {
                switch change.kind {
                case .added: registry.remote[id]!.audience.insert(change.member)
                case .removed: registry.remote[id]!.audience.remove(change.member)
                }
                let audience = registry.remote[id]!.audience
                registry.remote[id]!.replica?.audience = audience
                touched.append(id)
            }
            return touched
        }
        // An added member hears `session.available` from the owner's announcement (`.audience`).
        for id in ended where change.kind == .removed {
            let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(id.uuidString),
                                          "reason": .string(InvalidationReason.conversationEnded.rawValue)])
            for connection in connections(of: [change.member], container: change.container, environment: change.environment) {
                connection.send(text: text)
            }
        }
    }
}

