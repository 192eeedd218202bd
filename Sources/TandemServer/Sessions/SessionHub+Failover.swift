import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemStore

/// A session outlives its owner node (issue 20 items 3–4; decisions N33–N35): the owner
/// replicates the session's state to every node over the bus, in the order it applied it; when
/// the owner falls silent (N24), the surviving node with the lowest bus ID takes the session over
/// with the same ID, participants (minus the dead node's), state store, journal index and a
/// sequence above every number the dead owner announced.
extension SessionHub {
    /// Publishes one change of `session` for the other nodes. Call with the session's lock held,
    /// so that changes leave in the order they were applied.
    func replicate(_ session: LiveSession, _ change: SessionReplica.Change) {
        bus?.publish(.session(SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                             kind: .replicate(sessionID: session.id, change: change))))
    }

    /// Publishes the participant list after a join or a leave; call with the session's lock held.
    func replicateParticipants(_ session: LiveSession, _ participants: [SessionParticipant]) {
        guard let bus else { return }
        replicate(session, .participants(LiveSession.replicaParticipants(participants, node: bus.node)))
    }

    /// Publishes a whole copy of `session` (when it starts, after a takeover, for a new node).
    func publishReplica(_ session: LiveSession) {
        guard let bus else { return }
        session.state.withLock { state in
            guard !state.ended else { return }
            bus.publish(.session(SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                                kind: .replica(owner: bus.node, replica: session.replica(state, node: bus.node)))))
        }
    }

    /// Whether a whole copy of `session` as `state` holds it fits one bus message, with room for
    /// the participant list to fill up (N80): a copy the bus cannot carry leaves a node that
    /// starts or restarts without one, and the session without a successor there. Call with the
    /// session's lock held, after the change; true on one node.
    func copyFits(_ session: LiveSession, _ state: borrowing LiveSession.State) -> Bool {
        guard let bus, bus.transport != nil else { return true }
        let copy = SessionTraffic(container: session.container, environment: session.environment.rawValue,
                                  kind: .replica(owner: bus.node, replica: session.replica(state, node: bus.node)))
        return bus.fits(.session(copy), headroom: Self.copyHeadroom)
    }

    /// Bytes a copy keeps free for participants still to join (32 at most, about 300 bytes each).
    static let copyHeadroom = 16 << 10

    /// The refusal of a change that would make a session's copy too large for the bus (N80).
    static var copyTooLarge: CloudKitError {
        CloudKitError(.limitExceeded, "with several nodes a whole copy of a session (state store, journal index, activity, "
                      + "participants) must fit one bus message (NATS max_payload) so every node can take it over; this change "
                      + "would pass it (N80)")
    }

    /// A node heard for the first time gets a copy of every session this node owns.
    func publishReplicas() {
        for session in registry.withLock({ Array($0.sessions.values) }) { publishReplica(session) }
    }

    /// Another node's replica of a session it owns. A session this node had not heard of at all
    /// is announced to its audience's connections here (`session.available`, N83): its start's
    /// announcement never reached this node (the bus between the two was partitioned then, and
    /// plain NATS keeps nothing), and the owner sends its copies when it first hears this node.
    /// Before, those members never heard of the session. At a normal start the index entry comes
    /// first (`publishIndex`), so nobody hears it twice from here.
    func heard(replica: SessionReplica, owner: String, container: String, environment: Environment) {
        _ = yield(to: replica, owner: owner)
        // (Not `JSONValue?`: `nil` there would be `.null`, a JSON null, and pass as a session.)
        let (unheard, json) = registry.withLock { registry -> (Bool, JSONValue) in
            let json = LiveSession.json(id: replica.sessionID, conversationID: replica.conversationID, activity: replica.activity,
                                        initiatorConnection: replica.initiatorConnection)
            guard registry.sessions[replica.sessionID] == nil else { return (false, json) }
            // Of two copies heard (after a partition), the index follows the winning one (N70).
            if let known = registry.remote[replica.sessionID], known.owner != owner, let current = known.replica,
               current.wins(over: replica.generation, ownedBy: owner, owner: known.owner) { return (false, json) }
            let unheard = registry.remote[replica.sessionID] == nil
            registry.remote[replica.sessionID] = RemoteSession(
                owner: owner, container: container, environment: environment, conversationID: replica.conversationID,
                audience: replica.audience, json: json, replica: replica)
            return (unheard, json)
        }
        guard unheard else { return }
        let event = JSONWriter.string(["type": "session.available", "session": json])
        for connection in connections(of: replica.audience, container: container, environment: environment) {
            _ = connection.send(text: event)
        }
    }

    /// Two copies of one session (N70): a partition, or a pause, cut this node off from the
    /// others for longer than the silence; they took it for gone and one of them took its
    /// sessions over, while this node went on serving its own members in its own copy. When the
    /// nodes hear each other again, each publishes its copies, and of the two the one with the
    /// higher generation (the one taken over last, which the nodes that took it kept using)
    /// wins, then the lower owner ID (`SessionReplica.wins`): both owners decide alike. The
    /// losing copy ends here: its members on this node hear `session.invalidated` (`error`) and
    /// may join again, through this node, to the winning copy; nothing is published for it
    /// (the session lives on). A winner ignores the loser's copy.
    /// - Returns: whether this node's copy was ended.
    private func yield(to replica: SessionReplica, owner: String) -> Bool {
        guard let me = bus?.node, owner != me else { return false }
        let sessionID = replica.sessionID
        let members = registry.withLock { registry -> [any SessionPeer]? in
            guard let mine = registry.sessions[sessionID], replica.wins(over: mine.generation, ownedBy: me, owner: owner) else { return nil }
            registry.sessions.removeValue(forKey: sessionID)
            let session = mine
            let participants = session.state.withLock { state in
                state.ended = true
                return state.participants
            }
            for participant in participants { registry.clients[participant.connection.id]?.joined.removeValue(forKey: sessionID) }
            return participants.map(\.connection).filter { !($0 is RemotePeer) }
        }
        guard let members else { return false }
        let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(sessionID.uuidString),
                                      "reason": .string(InvalidationReason.error.rawValue)])
        for member in members { member.send(text: text) }
        return true
    }

    /// The replica of another node's session, when this node holds one.
    func replica(of sessionID: UUID, container: String, environment: Environment) -> SessionReplica? {
        registry.withLock { registry in
            guard let remote = registry.remote[sessionID], remote.container == container, remote.environment == environment else { return nil }
            return remote.replica
        }
    }

    /// The owner's side of a journal upload made on another node (N36): added while the
    /// participant is still in the session; otherwise the stored file is deleted if unused.
    func attach(_ attachment: JournalAttachment, sessionID: UUID, participantID: UUID, user: String) {
        guard let session = registry.withLock({ $0.sessions[sessionID] }),
              (try? append(attachment, to: session, by: { $0.id == participantID && $0.user == user })) != nil else {
            return removeUnused(attachment.checksum)
        }
    }

    /// Nodes `gone` fell silent: for each session one of them owned, with a replica here, the
    /// surviving node with the lowest ID (this one included) is the new owner; the sessions
    /// without a replica are returned, to be ended for this node's members (N24). Call with the
    /// registry's lock held; returns the sessions this node takes over too.
    /// Another node chosen keeps the owner's name in the index, marked orphaned at `now`, until
    /// it announces the takeover (N79).
    static func succeed(_ gone: Set<String>, in registry: inout Registry, node: String, now: UInt64)
        -> (ended: [(UUID, RemoteSession)], taken: [RemoteSession]) {
        let successor = (Array(registry.lastHeard.keys) + [node]).min()!
        var ended: [(UUID, RemoteSession)] = [], taken: [RemoteSession] = []
        // A session already waiting for another successor (N79) is decided again: that node may
        // be among the gone ones now, and this one the successor.
        for (id, remote) in registry.remote
        where gone.contains(remote.owner) || (remote.orphanedAt != nil && registry.lastHeard[remote.owner] == nil) {
            guard var replica = remote.replica else {
                ended.append((id, remote))
                registry.remote.removeValue(forKey: id)
                continue
            }
            // Members on nodes not heard any more leave too: a node that stopped just before
            // (N65) is no longer in `lastHeard`, and its members would stay for ever (N69).
            replica.participants.removeAll { gone.contains($0.node) || ($0.node != node && registry.lastHeard[$0.node] == nil) }
            registry.remote[id]!.replica = replica
            if successor == node {
                registry.remote[id]!.owner = successor
                taken.append(registry.remote[id]!)
            } else if registry.remote[id]!.orphanedAt == nil {
                registry.remote[id]!.orphanedAt = now
            }
        }
        // A connection that forwarded to a dead owner is announced closed to its successor too.
        for id in registry.clients.keys where !registry.clients[id]!.forwardedTo.isDisjoint(with: gone) {
            registry.clients[id]!.forwardedTo.insert(successor)
        }
        return (ended, taken)
    }

    /// Takes over a session whose owner died (N33): the same session ID, activity, audience,
    /// store and journal index; the participants on the surviving nodes keep their IDs (this
    /// node's connections directly, the others' through stand-ins); reliable messages are
    /// numbered from one reservation past the last one announced (N34). Every participant hears
    /// the new `session.participants`; the other nodes hear the new owner and a whole copy.
    func takeOver(_ remote: RemoteSession) {
        guard let bus, let replica = remote.replica, let activity = try? SessionActivity.parse(replica.activity) else { return }
        let session = LiveSession(id: replica.sessionID, container: remote.container, environment: remote.environment,
                                  conversationID: replica.conversationID, initiator: replica.initiator,
                                  initiatorConnection: replica.initiatorConnection, activity: activity, audience: remote.audience,
                                  startedAt: replica.startedAt, generation: replica.generation + 1)
        let settings = self.settings
        let taken = registry.withLock { registry -> Bool in
            guard registry.remote.removeValue(forKey: session.id) != nil, registry.sessions[session.id] == nil else { return false }
            var participants: [SessionParticipant] = []
            for participant in replica.participants {
                let peer: any SessionPeer
                if participant.node == bus.node {
                    guard let client = registry.clients[participant.connection], !(client.connection is RemotePeer) else { continue }
                    peer = client.connection
                } else {
                    peer = Self.proxy(in: &registry, node: participant.node, connection: participant.connection, user: participant.user,
                                      declared: nil, container: remote.container, environment: remote.environment, bus: bus)
                }
                registry.clients[peer.id]?.joined[session.id] = participant.id
                participants.append(SessionParticipant(id: participant.id, user: participant.user, connection: peer,
                                                       bucket: TokenBucket(rate: settings.messageRate, burst: settings.messageBurst),
                                                       joinedAt: participant.joinedAt))
            }
            session.state.withLock { state in
                state.participants = participants
                state.store = replica.store
                state.attachments = replica.attachments
                state.sequence = replica.reserved + SessionReplica.reservation
                state.reserved = state.sequence
            }
            registry.sessions[session.id] = session
            return true
        }
        guard taken else { return }
        publishIndex(session)
        publishReplica(session)
        session.state.withLock { state in
            LiveSession.broadcast(["type": "session.participants", "sessionID": .string(session.id.uuidString),
                                   "participants": LiveSession.participantsJSON(state.participants)], to: state.participants)
        }
    }
}
