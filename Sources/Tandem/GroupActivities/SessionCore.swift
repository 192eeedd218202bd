import Foundation
internal import TandemCore

/// The state of one session on this client, shared by its `GroupSession`, messengers,
/// journal and state store. Fed by `SessionLink` from the stream.
final class SessionCore: Sendable {
    struct Delivery: Sendable {
        var type: String
        var payload: [UInt8]
        var source: UUID
        var sequence: UInt64
        var reliable: Bool
    }

    struct State {
        var status = GroupSessionState.waiting
        var activity: JSONValue
        var participants: [UUID] = []
        var local: UUID?
        var store: [String: String] = [:]
        var attachments: [JSONValue] = []
        var subscribers: [String: [UUID: AsyncStream<Delivery>.Continuation]] = [:]
        /// An unreliable send the server refused, thrown by the next send (G5).
        var unreliableFailure: TandemError?
    }

    let id: UUID
    let conversationID: String
    let identifier: String
    let isLocallyInitiated: Bool
    let link: SessionLink
    let state: Locked<State>
    let statuses = Observers<GroupSessionState>()
    let participantChanges = Observers<Set<Participant>>()
    let activities = Observers<JSONValue>()
    let storeChanges = Observers<(key: String, value: String?)>()
    let attachmentChanges = Observers<[JSONValue]>()

    init(id: UUID, conversationID: String, activity: JSONValue, locallyInitiated: Bool, link: SessionLink) {
        self.id = id
        self.conversationID = conversationID
        identifier = activity["identifier"]?.stringValue ?? ""
        isLocallyInitiated = locallyInitiated
        self.link = link
        state = Locked(State(activity: activity))
    }

    var isInvalidated: Bool {
        state.withLock { if case .invalidated = $0.status { true } else { false } }
    }

    // MARK: Commands

    func join() async throws(TandemError) {
        switch state.withLock({ $0.status }) {
        case .joined: return
        case .invalidated: throw TandemError(.invalidArguments, "the session is invalidated; wait for a new one")
        case .waiting: break
        }
        _ = try await link.request("session.join", ["sessionID": .string(id.uuidString)]) { [self] result in applyJoin(result) }
        guard state.withLock({ $0.status }) == .joined else {
            throw TandemError(.invalidArguments, "the session was invalidated while joining")
        }
    }

    /// The join's snapshot (D36), applied on the reader before any later event.
    private func applyJoin(_ result: JSONValue) {
        guard let local = result["participantID"]?.stringValue.flatMap(UUID.init(uuidString:)) else { return }
        let participants = (result["participants"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue.flatMap(UUID.init(uuidString:)) }
        let store = result["store"]?.objectValue.map { object in
            Dictionary(object.entries.compactMap { entry in entry.value.stringValue.map { (entry.key, $0) } }, uniquingKeysWith: { $1 })
        } ?? [:]
        let attachments = result["attachments"]?.arrayValue ?? []
        let activity = result["session"]?["activity"]
        let joined = state.withLock { state -> Bool in
            guard case .waiting = state.status else { return false }
            state.status = .joined
            state.local = local
            state.participants = participants
            state.store = store
            state.attachments = attachments
            if let activity { state.activity = activity }
            return true
        }
        guard joined else { return }
        statuses.yield(.joined)
        participantChanges.yield(Set(participants.map(Participant.init(id:))))
        attachmentChanges.yield(attachments)
    }

    /// Invalidated locally first, so the server's own events about this session (e.g.
    /// `everyoneLeft` when this was the last participant) do not override `.left`.
    func leave() async {
        let wasJoined = state.withLock({ $0.status }) == .joined
        invalidate(.left)
        if wasJoined { _ = try? await link.request("session.leave", ["sessionID": .string(id.uuidString)]) }
    }

    func end() async {
        invalidate(.endedByParticipant)
        _ = try? await link.request("session.end", ["sessionID": .string(id.uuidString)])
    }

    func send(type: String, payload: [UInt8], to participants: Participants, reliable: Bool) async throws(TandemError) {
        let (status, failure) = state.withLock { state in
            defer { state.unreliableFailure = nil }
            return (state.status, state.unreliableFailure)
        }
        guard status == .joined else { throw TandemError(.invalidArguments, "join the session before sending") }
        if let failure { throw failure }
        if !reliable && payload.count > Limits.sessionMessageBytes {
            throw TandemError(.messageTooLarge, "the message is \(payload.count) bytes; at most \(Limits.sessionMessageBytes) (D32)",
                              serverErrorCode: "MESSAGE_TOO_LARGE")
        }
        let recipients: [UUID] = switch participants.storage {
        case .all: []
        case .only(let set): set.map(\.id)
        }
        if case .only(let set) = participants.storage, set.isEmpty { return }
        try await link.sendFrame(session: id, type: type, payload: payload, recipients: recipients, reliable: reliable)
    }

    func subscribe(type: String) -> AsyncStream<Delivery> {
        let (stream, continuation) = AsyncStream.makeStream(of: Delivery.self)
        let key = UUID()
        let live = state.withLock { state -> Bool in
            if case .invalidated = state.status { return false }
            state.subscribers[type, default: [:]][key] = continuation
            return true
        }
        if !live { continuation.finish() }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.subscribers[type]?.removeValue(forKey: key) } }
        return stream
    }

    // MARK: Events from the link

    func deliver(_ delivery: Delivery) {
        let targets = state.withLock { state in state.subscribers[delivery.type].map { Array($0.values) } ?? [] }
        for target in targets { target.yield(delivery) }
    }

    func participantsChanged(_ list: [JSONValue]) {
        let ids = list.compactMap { $0["id"]?.stringValue.flatMap(UUID.init(uuidString:)) }
        let joined = state.withLock { state -> Bool in
            state.participants = ids
            return state.status == .joined
        }
        if joined { participantChanges.yield(Set(ids.map(Participant.init(id:)))) }
    }

    func activityChanged(_ activity: JSONValue) {
        state.withLock { $0.activity = activity }
        activities.yield(activity)
    }

    func storeChanged(_ key: String, _ value: String) {
        state.withLock { state in
            if value.isEmpty { state.store.removeValue(forKey: key) } else { state.store[key] = value }
        }
        storeChanges.yield((key, value.isEmpty ? nil : value))
    }

    func attachmentsChanged(_ list: [JSONValue]) {
        state.withLock { $0.attachments = list }
        attachmentChanges.yield(list)
    }

    func unreliableFailed(_ error: TandemError) {
        state.withLock { $0.unreliableFailure = error }
    }

    /// Moves to `.invalidated(reason)` once; later calls are ignored. Ends every stream.
    func invalidate(_ reason: GroupSessionState.InvalidationReason) {
        let subscribers = state.withLock { state -> [AsyncStream<Delivery>.Continuation]? in
            if case .invalidated = state.status { return nil }
            state.status = .invalidated(reason: reason)
            defer { state.subscribers = [:] }
            return state.subscribers.values.flatMap(\.values)
        }
        guard let subscribers else { return }
        statuses.yield(.invalidated(reason: reason))
        statuses.finish()
        for subscriber in subscribers { subscriber.finish() }
        participantChanges.finish()
        activities.finish()
        storeChanges.finish()
        attachmentChanges.finish()
    }
}
