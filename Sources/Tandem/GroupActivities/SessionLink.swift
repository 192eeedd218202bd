import Foundation
internal import TandemCore
internal import TandemHTTP

/// The group activities client's stream WebSocket (the same `/stream/1/…` endpoint as
/// `Notifications`): JSON envelopes with replies, server events, and binary messenger frames
/// (decisions G3, G5). Opened on first use; when it drops, every session invalidates with
/// `.error` and the next call opens a new one (re-declaring active conversations).
final class SessionLink: Sendable {
    struct State {
        var client: WebSocketClient?
        var connecting: Task<WebSocketClient, any Error>?
        var connectionID: Int64 = 0
        var nextRequest: Int64 = 1
        var replies: [Int64: (reply: Reply<JSONValue>, apply: (@Sendable (JSONValue) -> Void)?)] = [:]
        var nextSequence: UInt32 = 1
        var acks: [UInt32: Reply<JSONValue>] = [:]
        var sessions: [UUID: SessionCore] = [:]
        var listeners: [UUID: (identifier: String, yield: @Sendable (SessionCore) -> Void)] = [:]
        var declared: [String] = []
    }

    let transport: Transport
    let state = Locked(State())
    /// The server's word that this user's eligibility may have changed (`groupState.changed`,
    /// R24), and the stream dropping (the answer must be asked again after a reconnect).
    let groupStateHints = Observers<Void>()

    init(transport: Transport) { self.transport = transport }

    // MARK: Connection

    func connection() async throws(TandemError) -> WebSocketClient {
        let task = state.withLock { state -> Task<WebSocketClient, any Error>? in
            if state.client != nil { return nil }
            if let connecting = state.connecting { return connecting }
            let task = Task { try await self.open() }
            state.connecting = task
            return task
        }
        if task == nil, let client = state.withLock({ $0.client }) { return client }
        do { return try await task!.value } catch {
            throw TandemError.streamConnect(error)
        }
    }

    private func open() async throws -> WebSocketClient {
        let client: WebSocketClient
        do {
            client = try await WebSocketClient.connect(to: Notifications.streamURL(transport), headers: transport.authorizationHeaders)
        } catch {
            state.withLock { $0.connecting = nil }
            throw TandemError.streamConnect(error)
        }
        let hello = Reply<JSONValue>()
        Task { await self.read(client, hello: hello) }
        do {
            let greeting = try await hello.wait()
            let declared = state.withLock { state in
                state.connectionID = greeting["connectionID"]?.int64Value ?? 0
                state.client = client
                state.connecting = nil
                return state.declared
            }
            for conversation in declared { _ = try await request("conversation.activate", ["conversationID": .string(conversation)]) }
            return client
        } catch {
            state.withLock { $0.connecting = nil }
            client.close()
            throw error
        }
    }

    var connectionID: Int64 { state.withLock { $0.connectionID } }

    /// Sends an envelope and waits for its reply.
    /// - Throws: the server's error (CloudKit-style code), `networkFailure` when the stream drops.
    /// `apply` runs on the reader, before any later event is handled, with a successful result.
    func request(_ type: String, _ body: JSONObject,
                 apply: (@Sendable (JSONValue) -> Void)? = nil) async throws(TandemError) -> JSONValue {
        let client = try await connection()
        let reply = Reply<JSONValue>()
        let id = state.withLock { state in
            defer { state.nextRequest += 1 }
            state.replies[state.nextRequest] = (reply, apply)
            return state.nextRequest
        }
        var envelope = body
        envelope["type"] = .string(type)
        envelope["id"] = .int(id)
        if await client.send(text: JSONWriter.string(.object(envelope))) == .closed {
            state.withLock { _ = $0.replies.removeValue(forKey: id) }
            throw TandemError(.networkFailure, "the stream closed")
        }
        return try await reply.wait()
    }

    /// Sends a messenger frame; for reliable ones waits for the server's acknowledgement.
    func sendFrame(session: UUID, type: String, payload: [UInt8], recipients: [UUID], reliable: Bool) async throws(TandemError) {
        let client = try await connection()
        let reply = Reply<JSONValue>()
        let sequence = state.withLock { state in
            defer { state.nextSequence &+= 1 }
            if reliable { state.acks[state.nextSequence] = reply }
            return state.nextSequence
        }
        var frame: [UInt8] = [0x01, reliable ? 0x03 : 0x00]
        frame.reserveCapacity(26 + type.utf8.count + recipients.count * 16 + payload.count)
        withUnsafeBytes(of: session.uuid) { frame.append(contentsOf: $0) }
        for shift in stride(from: 24, through: 0, by: -8) { frame.append(UInt8(truncatingIfNeeded: sequence >> UInt32(shift))) }
        let typeBytes = Array(type.utf8.prefix(65535))
        frame.append(UInt8(typeBytes.count >> 8))
        frame.append(UInt8(truncatingIfNeeded: typeBytes.count))
        frame.append(contentsOf: typeBytes)
        frame.append(UInt8(recipients.count >> 8))
        frame.append(UInt8(truncatingIfNeeded: recipients.count))
        for recipient in recipients { withUnsafeBytes(of: recipient.uuid) { frame.append(contentsOf: $0) } }
        frame.append(contentsOf: payload)
        let result = await client.send(binary: frame, droppable: !reliable)
        if result == .closed {
            state.withLock { _ = $0.acks.removeValue(forKey: sequence) }
            throw TandemError(.networkFailure, "the stream closed")
        }
        if reliable { _ = try await reply.wait() }
    }

    // MARK: Sessions

    /// Sessions of one activity as they become available, live ones first.
    func sessions<T: Sendable>(identifier: String, _ wrap: @escaping @Sendable (SessionCore) -> T) -> AsyncStream<T> {
        let (stream, continuation) = AsyncStream.makeStream(of: T.self)
        let id = UUID()
        let current = state.withLock { state in
            state.listeners[id] = (identifier, { continuation.yield(wrap($0)) })
            return state.sessions.values.filter { $0.identifier == identifier && !$0.isInvalidated }
        }
        for core in current { continuation.yield(wrap(core)) }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.listeners.removeValue(forKey: id) } }
        Task { _ = try? await self.connection() }
        return stream
    }

    func declare(_ conversationID: String, active: Bool) async throws(TandemError) {
        state.withLock { state in
            state.declared.removeAll { $0 == conversationID }
            if active { state.declared.append(conversationID) }
        }
        _ = try await request(active ? "conversation.activate" : "conversation.deactivate", ["conversationID": .string(conversationID)])
    }

    /// Remembers a conversation the server declared for this connection (sharing controller).
    func declareLocally(_ conversationID: String) {
        state.withLock { state in
            state.declared.removeAll { $0 == conversationID }
            state.declared.append(conversationID)
        }
    }

    /// The session core for a `session` JSON, made (and announced) when new.
    @discardableResult
    func available(_ json: JSONValue) -> SessionCore? {
        guard let text = json["sessionID"]?.stringValue, let id = UUID(uuidString: text), let activity = json["activity"] else { return nil }
        let (core, created, listeners) = state.withLock { state -> (SessionCore, Bool, [@Sendable (SessionCore) -> Void]) in
            if let existing = state.sessions[id], !existing.isInvalidated { return (existing, false, []) }
            let core = SessionCore(id: id, conversationID: json["conversationID"]?.stringValue ?? "", activity: activity,
                                   locallyInitiated: json["initiatorConnectionID"]?.int64Value == state.connectionID, link: self)
            state.sessions[id] = core
            let identifier = core.identifier
            return (core, true, state.listeners.values.filter { $0.identifier == identifier }.map(\.yield))
        }
        if created { for listener in listeners { listener(core) } } else { core.activityChanged(activity) }
        return core
    }

    private func core(_ envelope: JSONValue) -> SessionCore? {
        guard let text = envelope["sessionID"]?.stringValue, let id = UUID(uuidString: text) else { return nil }
        return state.withLock { $0.sessions[id] }
    }

    // MARK: Reading

    private func read(_ client: WebSocketClient, hello: Reply<JSONValue>) async {
        for await event in client.events {
            switch event {
            case .message(.text(let text)):
                guard let envelope = try? JSONParser.parse(text) else { continue }
                handle(envelope, hello: hello)
            case .message(.binary(let bytes)):
                deliver(bytes)
            case .closed(let close):
                hello.resolve(.failure(TandemError(close.code == 4401 ? .notAuthenticated : .networkFailure, "the stream closed: \(close)")))
                lost(close)
                return
            }
        }
    }

    private func handle(_ envelope: JSONValue, hello: Reply<JSONValue>) {
        switch envelope["type"]?.stringValue {
        case "hello":
            hello.resolve(.success(envelope))
        case "reply":
            guard let id = envelope["id"]?.int64Value, let (reply, apply) = state.withLock({ $0.replies.removeValue(forKey: id) }) else {
                return
            }
            if let error = envelope["error"] {
                reply.resolve(.failure(Self.error(error)))
            } else {
                apply?(envelope["result"] ?? .null)
                reply.resolve(.success(envelope["result"] ?? .null))
            }
        case "session.sent", "session.sendFailed":
            guard let sequence = envelope["clientSequence"]?.int64Value else { return }
            let reply = state.withLock { $0.acks.removeValue(forKey: UInt32(truncatingIfNeeded: sequence)) }
            if let error = envelope["error"] {
                let failure = Self.error(error)
                if let reply { reply.resolve(.failure(failure)) } else { core(envelope)?.unreliableFailed(failure) }
            } else {
                reply?.resolve(.success(envelope))
            }
        case "groupState.changed":
            groupStateHints.yield(())
        case "session.available":
            if let session = envelope["session"] { available(session) }
        case "session.participants":
            core(envelope)?.participantsChanged(envelope["participants"]?.arrayValue ?? [])
        case "session.activity":
            if let activity = envelope["activity"] { core(envelope)?.activityChanged(activity) }
        case "session.state":
            if let key = envelope["key"]?.stringValue { core(envelope)?.storeChanged(key, envelope["value"]?.stringValue ?? "") }
        case "journal.attachments":
            core(envelope)?.attachmentsChanged(envelope["attachments"]?.arrayValue ?? [])
        case "session.invalidated":
            let reason = envelope["reason"]?.stringValue.flatMap(GroupSessionState.InvalidationReason.init(rawValue:)) ?? .error
            if let core = core(envelope) {
                core.invalidate(reason)
                state.withLock { state in if state.sessions[core.id] === core { state.sessions.removeValue(forKey: core.id) } }
            }
        default:
            break
        }
    }

    private func deliver(_ bytes: [UInt8]) {
        guard bytes.count >= 44, bytes[0] == 0x01 else { return }
        let session = Self.uuid(bytes, 2)
        let source = Self.uuid(bytes, 18)
        var sequence: UInt64 = 0
        for index in 34..<42 { sequence = sequence << 8 | UInt64(bytes[index]) }
        let typeLength = Int(bytes[42]) << 8 | Int(bytes[43])
        guard bytes.count >= 44 + typeLength else { return }
        let type = String(decoding: bytes[44..<(44 + typeLength)], as: UTF8.self)
        guard let core = state.withLock({ $0.sessions[session] }) else { return }
        core.deliver(SessionCore.Delivery(type: type, payload: Array(bytes[(44 + typeLength)...]), source: source,
                                          sequence: sequence, reliable: bytes[1] & 0x01 != 0))
    }

    /// The stream dropped: pending requests fail, sessions invalidate with `.error`.
    private func lost(_ close: WebSocketClose) {
        let (replies, acks, sessions) = state.withLock { state in
            defer {
                state.client = nil
                state.replies = [:]
                state.acks = [:]
                state.sessions = [:]
            }
            return (Array(state.replies.values), Array(state.acks.values), Array(state.sessions.values))
        }
        let failure = TandemError(.networkFailure, "the stream closed: \(close)")
        for reply in replies.map(\.reply) + acks { reply.resolve(.failure(failure)) }
        for session in sessions { session.invalidate(.error) }
        groupStateHints.yield(())
        if close.code != 4401 { reconnectWhileListened() }
    }

    /// While someone iterates `sessions(on:)`, reopens the stream with the container's backoff
    /// (`Configuration.streamReconnection`), so new sessions keep arriving after a drop.
    private func reconnectWhileListened() {
        let policy = transport.configuration.streamReconnection
        Task {
            var failures = 0
            while state.withLock({ !$0.listeners.isEmpty && $0.client == nil }) {
                let delay = policy.delay(beforeRetry: failures, after: TandemError(.networkFailure, "stream closed"))
                try? await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                if state.withLock({ $0.listeners.isEmpty }) { return }
                if (try? await connection()) != nil { return }
                failures += 1
            }
        }
    }

    static func error(_ json: JSONValue) -> TandemError {
        let code = json["serverErrorCode"]?.stringValue ?? "INTERNAL_ERROR"
        return TandemError(TandemError.Code(serverErrorCode: code), json["reason"]?.stringValue ?? code, serverErrorCode: code,
                           retryAfterSeconds: json["retryAfter"]?.doubleValue)
    }

    static func uuid(_ bytes: [UInt8], _ index: Int) -> UUID {
        UUID(uuid: (bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3], bytes[index + 4], bytes[index + 5],
                    bytes[index + 6], bytes[index + 7], bytes[index + 8], bytes[index + 9], bytes[index + 10], bytes[index + 11],
                    bytes[index + 12], bytes[index + 13], bytes[index + 14], bytes[index + 15]))
    }
}
