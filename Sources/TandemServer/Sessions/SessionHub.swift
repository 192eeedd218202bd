import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Group sessions on this node (SharePlay's role, DESIGN.md §1): stream connections and the
/// conversations they declared active, live sessions, their participants and messenger traffic.
///
/// Live state is in memory (decisions G2), on the node that activated the session (its owner);
/// with a bus, other nodes forward their connections' session traffic to the owner and deliver
/// what it sends them (SessionHub+Cluster.swift; decisions N19–N22); every node keeps a copy of
/// each session, and a survivor takes it over when its owner dies (SessionHub+Failover.swift;
/// N33–N35). Lock order: `registry`,
/// then a session's `state`; never the other way round.
final class SessionHub: Sendable {
    struct Settings: Sendable {
        /// D33: 32 including the local participant.
        var participantLimit = Limits.participantsPerSession
        /// Messages per second per participant, and the burst allowed (decisions G6).
        var messageRate = 1000.0
        var messageBurst = 2000.0
    }

    /// One stream connection as sessions know it.
    struct StreamClient: Sendable {
        var connection: any SessionPeer
        var user: String
        var container: String
        var environment: Environment
        /// Conversations this connection declared active (D35), the latest last.
        var declared: [String] = []
        /// Sessions joined from this connection: session ID → participant ID.
        var joined: [UUID: UUID] = [:]
        /// Nodes this connection's traffic was forwarded to (told when it closes; N19).
        var forwardedTo: Set<String> = []
        /// Messenger frames forwarded to another node that asked for an answer and have had none
        /// yet: client sequence → (session, when forwarded, ms of `DispatchTime`) (N75).
        var awaiting: [UInt32: (session: UUID, at: UInt64)] = [:]
        /// Frames whose wait ran out and whose sender was told so, with when: a late answer for
        /// one of them is dropped, so each message has one outcome (N75).
        var expired: [UInt32: UInt64] = [:]
        /// Envelopes forwarded to another node that have had no `reply` yet: the envelope's `id`
        /// (as JSON text) → the id and when (ms of `DispatchTime`) (N75).
        var awaitingReplies: [String: (id: JSONValue, at: UInt64)] = [:]
    }

    struct Registry: Sendable {
        var clients: [UInt64: StreamClient] = [:]
        var sessions: [UUID: LiveSession] = [:]
        /// Live sessions other nodes own, as announced on the bus (N19).
        var remote: [UUID: RemoteSession] = [:]
        /// Other nodes' connections with a stand-in here: `"node:connection"` → its ID here.
        var proxies: [String: UInt64] = [:]
        var nextProxy: UInt64 = 1 << 63
        /// When each other node was last heard (milliseconds of `DispatchTime`), N24.
        var lastHeard: [String: UInt64] = [:]
        /// Other nodes' connections' declared conversations, by `"node:connection"` (N57).
        var declaredElsewhere: [String: Declaration] = [:]
        /// Nodes that said they are stopping (N65): their later traffic is ignored (N69).
        var departed: Set<String> = []
        /// This node said it is stopping (`leave()`): it takes nothing over (N69).
        var leaving = false
        /// Members of a silent node this node's sessions dropped, told when it is heard again (N69).
        var dropped: [String: [DroppedMember]] = [:]
        /// When the heartbeat last ran (ms of `DispatchTime`): a late tick means this node was
        /// paused, and the others' silence meanwhile does not count (N69).
        var lastTick: UInt64 = 0
        /// Until when (ms) this node, just resumed from a pause, refuses messenger frames for
        /// the sessions it runs: another node may have taken them over meanwhile (N77).
        var resumedUntil: UInt64 = 0
        /// When this node last published copies of its sessions because another asked (ms, N79).
        var copiesRepublishedAt: UInt64 = 0
    }

    /// A member on another node that left this node's session because its node fell silent.
    struct DroppedMember: Sendable {
        var connection: UInt64
        var sessions: [UUID]
        var container: String
        var environment: Environment
        /// ms of `DispatchTime`; forgotten after `SessionHub.droppedMemory`.
        var at: UInt64
    }

    let registry = Locked(Registry())
    let membership: any SessionMembership
    let journal: AssetFiles
    let settings: Settings
    /// The bus to other nodes; nil for a hub on its own (tests).
    let bus: EventBus?
    /// Activity invitations (`invitation.open`, R20); nil for a hub without a store (tests).
    let invitations: ActivityInvitations?

    init(membership: any SessionMembership, journal: AssetFiles, settings: Settings, bus: EventBus? = nil,
         invitations: ActivityInvitations? = nil) {
        self.membership = membership
        self.journal = journal
        self.settings = settings
        self.bus = bus
        self.invitations = invitations
        membership.observeMembership { [weak self] change in
            self?.membershipChanged(change)
            self?.remoteMembershipChanged(change)
        }
        if let bus {
            connect(to: bus)
            startHeartbeat()
        }
    }

    // MARK: Connections

    /// A stream connection was accepted: it hears of the live sessions of its user's conversations.
    func connected(_ connection: any SessionPeer, user: String, container: String, environment: Environment) {
        let visible = registry.withLock { registry -> [JSONValue] in
            registry.clients[connection.id] = StreamClient(connection: connection, user: user, container: container,
                                                           environment: environment)
            return registry.sessions.values.compactMap { session in
                guard session.container == container, session.environment == environment else { return nil }
                return session.state.withLock { state in
                    state.audience.contains(user) && !state.ended ? session.json(state.activity) : nil
                }
            }
        }
        for session in visible + remoteSessions(visibleTo: user, container: container, environment: environment) {
            _ = connection.send(text: JSONWriter.string(["type": "session.available", "session": session]))
        }
    }

    /// A stream connection closed: its participants leave their sessions.
    func disconnected(_ connection: any SessionPeer) {
        guard let client = registry.withLock({ $0.clients.removeValue(forKey: connection.id) }) else { return }
        if !client.declared.isEmpty {
            publishDeclared(client, declared: [])
            groupStateChanged(for: [client.user], container: client.container, environment: client.environment)
        }
        for (sessionID, participantID) in client.joined {
            guard let session = registry.withLock({ $0.sessions[sessionID] }) else { continue }
            drop(session) { $0.id == participantID }
        }
        for owner in client.forwardedTo {
            bus?.publish(.session(SessionTraffic(container: client.container, environment: client.environment.rawValue,
                                                 kind: .disconnected(owner: owner, connection: connection.id))))
        }
    }

    func client(_ connection: any SessionPeer) throws(CloudKitError) -> StreamClient {
        guard let client = registry.withLock({ $0.clients[connection.id] }) else { throw CloudKitError(.notFound, "connection closed") }
        return client
    }

    /// A live session this connection may address.
    func session(_ id: UUID, for client: StreamClient) throws(CloudKitError) -> LiveSession {
        guard let session = registry.withLock({ $0.sessions[id] }), session.container == client.container,
              session.environment == client.environment else {
            throw CloudKitError(.notFound, "no live session '\(id.uuidString)'")
        }
        return session
    }

    /// Whether a live session whose audience includes `user` shows this preview image; another
    /// node's sessions too, from the index (N37).
    func showsPreview(_ checksum: String, to user: String, container: String, environment: Environment) -> Bool {
        registry.withLock { registry in
            registry.sessions.values.contains { session in
                session.container == container && session.environment == environment && session.state.withLock { state in
                    state.audience.contains(user) && state.activity.metadata["previewImage"]?["checksum"]?.stringValue == checksum
                }
            } || registry.remote.values.contains { remote in
                remote.container == container && remote.environment == environment && remote.audience.contains(user)
                    && remote.json["activity"]?["metadata"]?["previewImage"]?["checksum"]?.stringValue == checksum
            }
        }
    }

    // MARK: Eligibility and activation

    /// Why `user` may not start a session in `conversationID` now, or nil when they may (D35).
    func ineligibility(user: String, conversationID: String?, container: String, environment: Environment) throws -> String? {
        guard let conversationID else { return "noActiveConversation" }
        guard let members = try membership.members(of: conversationID, container: container, environment: environment),
              members.contains(user) else { return "notAMember" }
        let declared = registry.withLock { registry in
            registry.clients.values.contains { $0.user == user && $0.container == container && $0.environment == environment
                && $0.declared.contains(conversationID) }
                || registry.declaredElsewhere.values.contains { $0.user == user && $0.container == container
                    && $0.environment == environment && $0.conversations.contains(conversationID) }
        }
        guard declared else { return "noActiveConversation" }
        return members.count > settings.participantLimit ? "conversationFull" : nil
    }

    /// Starts `activity` in a conversation (SharePlay: `GroupActivity.activate()`): the
    /// conversation's live session of the same activity is updated; one of another activity is
    /// ended only when `replace` (decisions G4). Every member's stream hears `session.available`.
    /// - Throws: `ACCESS_DENIED` when not eligible (reason first), `CONFLICT` for another
    ///   activity's session without `replace`.
    func activate(_ connection: any SessionPeer, conversationID: String?, activity: SessionActivity,
                  replace: Bool) throws -> JSONValue {
        let client = try client(connection)
        let conversation = conversationID ?? client.declared.last
        if let reason = try ineligibility(user: client.user, conversationID: conversation, container: client.container,
                                          environment: client.environment) {
            throw CloudKitError(reason == "conversationFull" ? .tooManyParticipants : .accessDenied,
                                "\(reason): you cannot start an activity in this conversation now (D35)")
        }
        let members = try membership.members(of: conversation!, container: client.container, environment: client.environment) ?? []
        let (session, replaced, existing) = try registry.withLock { registry throws -> (LiveSession, [LiveSession], Bool) in
            let current = registry.sessions.values.filter {
                $0.conversationID == conversation && $0.container == client.container && $0.environment == client.environment
            }
            if let same = current.first(where: { $0.state.withLock { $0.activity.identifier } == activity.identifier }) {
                return (same, [], true)
            }
            if !current.isEmpty && !replace {
                throw CloudKitError(.conflict, "the conversation already has a session of another activity; activate with replace to end it")
            }
            let session = LiveSession(container: client.container, environment: client.environment, conversationID: conversation!,
                                      initiator: client.user, initiatorConnection: connection.id, activity: activity, audience: members)
            guard session.state.withLock({ copyFits(session, $0) }) else { throw Self.copyTooLarge }
            registry.sessions[session.id] = session
            return (session, current, false)
        }
        for old in replaced { finish(old, .endedByParticipant) }
        if existing {
            try setActivity(session, activity)
        } else {
            publishIndex(session)
            publishReplica(session)
            announce(session, to: members)
        }
        return session.state.withLock { session.json($0.activity) }
    }

    /// The answer to a join: the participant's ID, the session, its participants, journal and
    /// state store (D36). Call with the session's lock held.
    static func snapshot(_ session: LiveSession, _ state: borrowing LiveSession.State, participant: UUID) -> JSONValue {
        .object(["participantID": .string(participant.uuidString), "session": session.json(state.activity),
                 "participants": LiveSession.participantsJSON(state.participants),
                 "attachments": .array(state.attachments.map(\.json)), "store": LiveSession.storeJSON(state.store)])
    }

    /// Sends `session.available` to every stream connection of `users`.
    func announce(_ session: LiveSession, to users: Set<String>) {
        let event = JSONWriter.string(["type": "session.available", "session": session.state.withLock { session.json($0.activity) }])
        for connection in connections(of: users, container: session.container, environment: session.environment) {
            _ = connection.send(text: event)
        }
        publishAudience(session, users: users, text: event, reached: [])
    }

    /// This node's own stream connections of `users` (not stand-ins for other nodes' ones: those
    /// nodes reach their connections themselves).
    func connections(of users: Set<String>, container: String, environment: Environment) -> [any SessionPeer] {
        registry.withLock { registry in
            registry.clients.values.filter { users.contains($0.user) && $0.container == container && $0.environment == environment
                && !($0.connection is RemotePeer) }
                .map(\.connection)
        }
    }

    /// Replaces the activity for everyone (SharePlay: setting `GroupSession.activity`).
    func setActivity(_ session: LiveSession, _ activity: SessionActivity) throws {
        let audience = session.state.withLock { $0.audience }
        let targets = connections(of: audience, container: session.container, environment: session.environment)
        let (text, reached) = try session.state.withLock { state throws -> (String, [any SessionPeer]) in
            guard !state.ended else { throw CloudKitError(.notFound, "the session has ended") }
            guard state.activity.identifier == activity.identifier else {
                throw CloudKitError.badRequest("a session's activity keeps its identifier '\(state.activity.identifier)'; activate a new one instead")
            }
            let previous = state.activity
            state.activity = activity
            guard copyFits(session, state) else {
                state.activity = previous
                throw Self.copyTooLarge
            }
            let text = JSONWriter.string(["type": "session.activity", "sessionID": .string(session.id.uuidString), "activity": activity.json])
            var sent = Set<UInt64>()
            for connection in state.participants.map(\.connection) + targets where sent.insert(connection.id).inserted {
                _ = connection.send(text: text)
            }
            return (text, state.participants.map(\.connection))
        }
        publishIndex(session)
        publishAudience(session, users: audience, text: text, reached: reached)
    }

    // MARK: Join, leave, end

    /// Joins from `connection` with a fresh participant ID (D34). The answer, sent here under the
    /// session's lock so it precedes any traffic for the new participant, carries the activity,
    /// the participants, the journal and the state store (D36). A connection that already joined
    /// gets the same answer again, with its participant ID (N82): a join whose answer was lost
    /// between nodes (and was failed to its sender as "no answer, retry", N75) may be retried.
    /// - Throws: `ACCESS_DENIED` for a non-member, `TOO_MANY_PARTICIPANTS` at the limit (D33),
    ///   `LIMIT_EXCEEDED` when with several nodes the session's copy would no longer fit one bus
    ///   message (N80).
    func join(_ connection: any SessionPeer, sessionID: UUID, replyID: JSONValue) throws {
        let client = try client(connection)
        let session = try session(sessionID, for: client)
        guard try membership.members(of: session.conversationID, container: client.container, environment: client.environment)?
            .contains(client.user) == true else {
            throw CloudKitError(.accessDenied, "only members of the conversation may join its sessions")
        }
        let limit = settings.participantLimit
        let bucket = TokenBucket(rate: settings.messageRate, burst: settings.messageBurst)
        try registry.withLock { registry throws in
            guard registry.clients[connection.id] != nil else { throw CloudKitError(.notFound, "connection closed") }
            if let joined = registry.clients[connection.id]!.joined[sessionID] {
                try session.state.withLock { state throws in
                    guard !state.ended, state.participants.contains(where: { $0.id == joined }) else {
                        throw CloudKitError(.notFound, "the session has ended")
                    }
                    _ = connection.send(text: JSONWriter.string(["type": "reply", "id": replyID,
                                                                 "result": Self.snapshot(session, state, participant: joined)]))
                }
                return
            }
            let participant = try session.state.withLock { state throws -> UUID in
                guard !state.ended else { throw CloudKitError(.notFound, "the session has ended") }
                guard state.participants.count < limit else {
                    throw CloudKitError(.tooManyParticipants, "the session already has \(limit) participants (D33)")
                }
                let participant = SessionParticipant(id: UUID.random(), user: client.user, connection: connection, bucket: bucket,
                                                             joinedAt: Clock.milliseconds())
                state.participants.append(participant)
                guard copyFits(session, state) else {
                    state.participants.removeLast()
                    throw Self.copyTooLarge
                }
                let snapshot = Self.snapshot(session, state, participant: participant.id)
                // A member on another node gets the answer over the bus; one the bus cannot carry
                // (the state store over NATS max_payload) is refused, not left unanswered (N61).
                if connection.send(text: JSONWriter.string(["type": "reply", "id": replyID, "result": snapshot])) == .dropped,
                   connection is RemotePeer {
                    state.participants.removeLast()
                    throw CloudKitError(.limitExceeded, "the session's state is larger than the bus between nodes carries "
                                        + "(NATS max_payload): members on other nodes cannot join until it is smaller")
                }
                replicateParticipants(session, state.participants)
                LiveSession.broadcast(["type": "session.participants", "sessionID": .string(sessionID.uuidString),
                                       "participants": LiveSession.participantsJSON(state.participants)],
                                      to: state.participants, except: participant.id)
                return participant.id
            }
            registry.clients[connection.id]!.joined[sessionID] = participant
        }
    }

    /// The local participant leaves (SharePlay: `leave()`); the others continue.
    func leave(_ connection: any SessionPeer, sessionID: UUID) throws {
        let client = try client(connection)
        let session = try session(sessionID, for: client)
        guard let participant = registry.withLock({ $0.clients[connection.id]?.joined.removeValue(forKey: sessionID) }) else {
            throw CloudKitError(.notFound, "you have not joined this session")
        }
        drop(session) { $0.id == participant }
    }

    /// Ends the session for everyone (SharePlay: `end()`); any member may.
    func end(_ connection: any SessionPeer, sessionID: UUID) throws {
        let client = try client(connection)
        let session = try session(sessionID, for: client)
        guard session.state.withLock({ $0.audience.contains(client.user) }) else {
            throw CloudKitError(.accessDenied, "only members of the conversation may end its sessions")
        }
        finish(session, .endedByParticipant)
    }

    /// Removes the participants matching `predicate`; those get `session.invalidated` with
    /// `reason` when one is given. Ends the session when nobody is left (`everyoneLeft`) or when
    /// its initiator left under `endsWhenInitiatorLeaves`.
    func drop(_ session: LiveSession, reason: InvalidationReason? = nil, where predicate: (SessionParticipant) -> Bool) {
        let outcome = session.state.withLock { state -> InvalidationReason? in
            guard !state.ended else { return nil }
            let dropped = state.participants.filter(predicate)
            guard !dropped.isEmpty else { return nil }
            state.participants.removeAll(where: predicate)
            replicateParticipants(session, state.participants)
            if let reason {
                let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(session.id.uuidString),
                                              "reason": .string(reason.rawValue)])
                for participant in dropped { _ = participant.connection.send(text: text) }
            }
            if state.participants.isEmpty { return .everyoneLeft }
            if state.activity.endsWhenInitiatorLeaves && dropped.contains(where: { $0.user == session.initiator })
                && !state.participants.contains(where: { $0.user == session.initiator }) {
                return .initiatorLeft
            }
            LiveSession.broadcast(["type": "session.participants", "sessionID": .string(session.id.uuidString),
                                   "participants": LiveSession.participantsJSON(state.participants)], to: state.participants)
            return nil
        }
        if let outcome { finish(session, outcome) }
    }

    /// Ends a session: every participant and every member's connection hears
    /// `session.invalidated` with `reason`; its journal files are deleted (D37).
    func finish(_ session: LiveSession, _ reason: InvalidationReason) {
        let ending = registry.withLock { registry
            -> (targets: [any SessionPeer], checksums: [String], participants: [any SessionPeer], audience: Set<String>)? in
            guard registry.sessions.removeValue(forKey: session.id) != nil else { return nil }
            let (participants, audience, attachments) = session.state.withLock { state in
                state.ended = true
                defer { state.participants = []; state.attachments = [] }
                return (state.participants.map(\.connection), state.audience, state.attachments)
            }
            var targets = participants
            for id in registry.clients.keys {
                registry.clients[id]!.joined.removeValue(forKey: session.id)
                let client = registry.clients[id]!
                if audience.contains(client.user) && client.container == session.container && client.environment == session.environment
                    && !(client.connection is RemotePeer) {
                    targets.append(client.connection)
                }
            }
            return (targets, attachments.map(\.checksum), participants, audience)
        }
        guard let ending else { return }
        let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(session.id.uuidString),
                                      "reason": .string(reason.rawValue)])
        var sent = Set<UInt64>()
        for connection in ending.targets where sent.insert(connection.id).inserted { _ = connection.send(text: text) }
        publishEnded(session)
        publishAudience(session, users: ending.audience, text: text, reached: ending.participants)
        for checksum in Set(ending.checksums) { removeUnused(checksum) }
    }

    // MARK: Membership

    /// Members removed from a conversation are dropped from its live sessions at once
    /// (`conversationEnded` for them, decisions G10); added ones hear of the sessions.
    func membershipChanged(_ change: MembershipChange) {
        membershipChangedGroupState(change)
        let sessions = registry.withLock { registry in
            registry.sessions.values.filter {
                $0.conversationID == change.conversationID && $0.container == change.container && $0.environment == change.environment
            }
        }
        for session in sessions {
            switch change.kind {
            case .added:
                let new = session.state.withLock { $0.audience.insert(change.member).inserted }
                if new { announce(session, to: [change.member]) }
            case .removed:
                session.state.withLock { _ = $0.audience.remove(change.member) }
                let theirs = connections(of: [change.member], container: change.container, environment: change.environment)
                registry.withLock { registry in
                    for id in registry.clients.keys where registry.clients[id]!.user == change.member {
                        registry.clients[id]!.joined.removeValue(forKey: session.id)
                    }
                }
                // Every connection of theirs hears `conversationEnded` once, below; joined or not.
                drop(session) { $0.user == change.member }
                let text = JSONWriter.string(["type": "session.invalidated", "sessionID": .string(session.id.uuidString),
                                              "reason": .string(InvalidationReason.conversationEnded.rawValue)])
                for connection in theirs { _ = connection.send(text: text) }
            }
        }
    }
}
