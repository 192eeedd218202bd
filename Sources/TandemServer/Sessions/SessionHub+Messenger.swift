import Foundation
import Synchronization
import TandemCore
import TandemHTTP
import TandemStore

extension SessionHub {
    /// A messenger frame from `connection` (SharePlay: `GroupSessionMessenger.send`): checked
    /// (joined, ≤ 256 KiB D32, rate G6), then delivered to the other participants or the chosen
    /// ones, never back to the sender (D30). Reliable frames get the session's next sequence
    /// number and are queued to every receiver under the session's lock, so all see one order
    /// (D31); unreliable ones are droppable when a receiver's send queue is full.
    func receive(_ bytes: [UInt8], on connection: any SessionPeer) {
        guard let frame = SessionFrames.parse(bytes) else {
            _ = connection.send(text: JSONWriter.string(["type": "error", "reason": "malformed session frame"]))
            return
        }
        // Another node owns the session: it checks, numbers and delivers (N20).
        if bus != nil, !(connection is RemotePeer) {
            switch forwardFrame(bytes, session: frame.session, from: connection, awaiting: frame.acknowledge ? frame.clientSequence : nil) {
            case .local: break
            case .forwarded: return
            case .refused(let refusal): return refuse(frame, on: connection, refusal)
            }
        }
        let (session, participant, resuming) = registry.withLock { registry in
            // The heartbeat's last tick is over 1.5 s old (its first frames after a pause reach
            // this node before the heartbeat or the bus can notice), or one of them noticed.
            (registry.sessions[frame.session], registry.clients[connection.id]?.joined[frame.session],
             registry.lastTick != 0 && (registry.resumedUntil > Self.now() || Self.now() - registry.lastTick > 1500))
        }
        if resuming, session != nil, bus != nil {
            // Just resumed from a pause: the others may have taken this session over meanwhile;
            // numbering this frame here could make a second order (N77). Nothing is sent.
            var error = CloudKitError(.tryAgainLater, "the node that runs the session was paused and is catching up; nothing was sent, "
                                      + "retry in a moment")
            error.retryAfter = 1
            return refuse(frame, on: connection, error)
        }
        if session == nil, connection is RemotePeer, registry.withLock({ $0.remote[frame.session] != nil }) {
            // Forwarded here by a node whose route is behind: the session lives on another node
            // (a takeover or a merge in the last moments). The sender was not refused by the
            // session, so `NOT_FOUND` would be wrong (stop 42's review, N79).
            var error = CloudKitError(.tryAgainLater, "the session moved to another node as this message reached it; nothing was "
                                      + "sent, retry in a moment")
            error.retryAfter = 1
            return refuse(frame, on: connection, error)
        }
        guard let session, let participant else {
            return refuse(frame, on: connection, CloudKitError(.notFound, "you have not joined session '\(frame.session.uuidString)'"))
        }
        guard frame.payload.count <= Limits.sessionMessageBytes else {
            return refuse(frame, on: connection, CloudKitError(.messageTooLarge,
                                                               "the message is \(frame.payload.count) bytes; at most \(Limits.sessionMessageBytes) (D32)"))
        }
        // Reliable frames are numbered and queued to every receiver under the session's lock, so
        // all see one order (D31). Unreliable ones only need their sender's order, which the
        // connection's mailbox keeps (one frame of a connection at a time): they are queued after
        // the lock is released, so 32 senders do not queue each other's fan-out behind one lock.
        let busDown = ownerUnreachable() != nil
        let outcome = session.state.withLock { state -> Result<(sequence: UInt64, later: [any SessionPeer]), CloudKitError> in
            guard !state.ended, let index = state.participants.firstIndex(where: { $0.id == participant }) else {
                return .failure(CloudKitError(.notFound, "you are no longer in the session"))
            }
            guard state.participants[index].bucket.take() else {
                return .failure(CloudKitError(.throttled,
                                              "more than \(Int(settings.messageRate)) messages per second (burst \(Int(settings.messageBurst))); slow down (G6)"))
            }
            state.messages += 1
            let receivers = state.participants.lazy.filter { receiver in
                receiver.id != participant && (frame.recipients.isEmpty || frame.recipients.contains(receiver.id))
            }.map(\.connection)
            guard frame.reliable else { return .success((0, Array(receivers))) }
            // While this node's bus is down, a number given here would reach only the nodes that
            // are back on the bus first when libnats flushes, and the rest would see a gap
            // (stop 41's review): refused, as the other nodes refuse frames for it meanwhile (N68, N78).
            if busDown, receivers.contains(where: { $0 is RemotePeer }) { return .failure(Self.busDown) }
            state.sequence += 1
            if bus != nil, state.sequence > state.reserved {
                // Announced before the first number of the block is used (N34).
                state.reserved = state.sequence - 1 + SessionReplica.reservation
                replicate(session, .reserved(state.reserved))
            }
            let numbered = SessionFrames.delivery(frame, source: participant, sequence: state.sequence)
            RemotePeer.fanOut(binary: numbered, droppable: false, to: Array(receivers))
            return .success((state.sequence, []))
        }
        switch outcome {
        case .failure(let failure):
            refuse(frame, on: connection, failure)
        case .success(let (sequence, later)):
            if !later.isEmpty {
                let delivery = SessionFrames.delivery(frame, source: participant, sequence: 0)
                RemotePeer.fanOut(binary: delivery, droppable: true, to: later)
            }
            if frame.acknowledge {
                _ = connection.send(text: JSONWriter.string(["type": "session.sent", "sessionID": .string(frame.session.uuidString),
                                                             "clientSequence": .int(Int64(frame.clientSequence)),
                                                             "sequence": .int(Int64(sequence))]))
            }
        }
    }

    private func refuse(_ frame: SessionFrames.Outgoing, on connection: any SessionPeer, _ error: CloudKitError) {
        var body: JSONObject = ["serverErrorCode": .string(error.code.rawValue), "reason": .string(error.reason)]
        if let retryAfter = error.retryAfter { body["retryAfter"] = .int(Int64(retryAfter)) }
        _ = connection.send(text: JSONWriter.string([
            "type": "session.sendFailed", "sessionID": .string(frame.session.uuidString),
            "clientSequence": .int(Int64(frame.clientSequence)), "error": .object(body)]))
    }

    /// The participant of `connection` in `session`.
    func participant(_ connection: any SessionPeer, in session: LiveSession) throws(CloudKitError) -> UUID {
        guard let id = registry.withLock({ $0.clients[connection.id]?.joined[session.id] }) else {
            throw CloudKitError(.notFound, "you have not joined this session")
        }
        return id
    }

    /// Sets one key of the session's state store (D36, G8); the other participants hear
    /// `session.state`. An empty value removes the key.
    /// - Throws: `MESSAGE_TOO_LARGE` over 256 KiB, `LIMIT_EXCEEDED` past 1,000 keys, and with
    ///   several nodes when the session's copy would no longer fit one bus message (N80).
    func setState(_ connection: any SessionPeer, sessionID: UUID, key: String, value: String) throws {
        let client = try client(connection)
        let session = try session(sessionID, for: client)
        let participant = try participant(connection, in: session)
        guard (1...Limits.nameLength).contains(key.utf8.count) else { throw CloudKitError.badRequest("a state key has 1-255 bytes") }
        guard value.utf8.count <= Limits.sessionStateValueBytes else {
            throw CloudKitError(.messageTooLarge, "a state value has at most \(Limits.sessionStateValueBytes) bytes")
        }
        try session.state.withLock { state throws in
            if value.isEmpty {
                state.store.removeValue(forKey: key)
            } else {
                guard state.store[key] != nil || state.store.count < Limits.sessionStateKeys else {
                    throw CloudKitError(.limitExceeded, "a session's state store holds at most \(Limits.sessionStateKeys) keys")
                }
                let previous = state.store.updateValue(value, forKey: key)
                guard copyFits(session, state) else {
                    state.store[key] = previous
                    throw Self.copyTooLarge
                }
            }
            replicate(session, .state(key: key, value: value))
            LiveSession.broadcast(["type": "session.state", "sessionID": .string(sessionID.uuidString), "key": .string(key),
                                   "value": .string(value)], to: state.participants, except: participant)
        }
    }

    // MARK: Journal

    /// Adds an attachment (SharePlay: `GroupSessionJournal.add`); every participant hears the
    /// new list (`journal.attachments`). The caller must be joined as `participantID`, which is
    /// checked before the body is read. On a node that does not own the session, the bytes go to
    /// the shared `journal/` and the owner adds them to the index (N36).
    /// - Throws: `LIMIT_EXCEEDED` over 100 MiB (D37), `NOT_FOUND` when not joined.
    func addAttachment(user: String, container: String, environment: Environment, sessionID: UUID, participantID: UUID,
                       body: HTTPRequest, metadata: String) throws -> JSONValue {
        guard hasParticipant(participantID, user: user, container: container, environment: environment, sessionID: sessionID) else {
            throw CloudKitError(.notFound, "you have not joined session '\(sessionID.uuidString)' as that participant")
        }
        let limit = Limits.journalAttachmentBytes
        let (checksum, size) = try AssetRoutes.storeBody(body, in: journal, limit: limit,
                                                         tooLarge: "a journal attachment has at most \(limit) bytes (100 MiB, D37)")
        let attachment = JournalAttachment(id: UUID.random(), checksum: checksum, size: size, metadata: metadata,
                                           createdAt: Clock.milliseconds())
        if let local = registry.withLock({ $0.sessions[sessionID] }) {
            do {
                try append(attachment, to: local, by: { $0.id == participantID && $0.user == user })
            } catch {
                removeUnused(checksum)
                throw error
            }
        } else if let bus, let owner = registry.withLock({ $0.remote[sessionID]?.owner }) {
            bus.publish(.session(SessionTraffic(container: container, environment: environment.rawValue,
                                                kind: .attach(owner: owner, sessionID: sessionID, participantID: participantID,
                                                              user: user, attachment: attachment))))
        } else {
            removeUnused(checksum)
            throw CloudKitError(.notFound, "the session has ended")
        }
        return attachment.json
    }

    /// Adds `attachment` to the index while `by` is still one of the session's participants.
    func append(_ attachment: JournalAttachment, to session: LiveSession, by caller: (SessionParticipant) -> Bool) throws {
        try session.state.withLock { state throws in
            guard !state.ended, state.participants.contains(where: caller) else { throw CloudKitError(.notFound, "the session has ended") }
            state.attachments.append(attachment)
            guard copyFits(session, state) else {
                state.attachments.removeLast()
                throw Self.copyTooLarge
            }
            broadcastAttachments(session, state)
            replicate(session, .attachments(state.attachments))
        }
    }

    /// Removes an attachment for everyone (SharePlay: `GroupSessionJournal.remove`); any participant may.
    func removeAttachment(_ connection: any SessionPeer, sessionID: UUID, attachmentID: UUID) throws {
        let client = try client(connection)
        let session = try session(sessionID, for: client)
        _ = try participant(connection, in: session)
        let gone = try session.state.withLock { state throws -> String in
            guard let index = state.attachments.firstIndex(where: { $0.id == attachmentID }) else {
                throw CloudKitError(.notFound, "no attachment '\(attachmentID.uuidString)'")
            }
            let removed = state.attachments.remove(at: index)
            broadcastAttachments(session, state)
            replicate(session, .attachments(state.attachments))
            return state.attachments.contains { $0.checksum == removed.checksum } ? "" : removed.checksum
        }
        if !gone.isEmpty { removeUnused(gone) }
    }

    /// Deletes a journal file no live session of this node, nor any other node's as replicated
    /// here, still lists (the journal may be shared by the nodes, N36).
    func removeUnused(_ checksum: String) {
        let used = registry.withLock { registry in
            registry.sessions.values.contains { session in session.state.withLock { $0.attachments.contains { $0.checksum == checksum } } }
                || registry.remote.values.contains { $0.replica?.attachments.contains { $0.checksum == checksum } == true }
        }
        if !used { journal.remove(checksum: checksum) }
    }

    /// The file of an attachment, for a user with a participant in the session; on any node
    /// when the nodes share `journal/` (N36). Sent as it is read (`FileDownload`).
    func attachmentFile(user: String, container: String, environment: Environment, sessionID: UUID, attachmentID: UUID) throws -> String {
        let local = registry.withLock { $0.sessions[sessionID] }.flatMap { $0.container == container && $0.environment == environment ? $0 : nil }
        let checksum = local?.state.withLock { state in
            state.participants.contains { $0.user == user } ? state.attachments.first { $0.id == attachmentID }?.checksum : nil
        } ?? replica(of: sessionID, container: container, environment: environment).flatMap { replica in
            replica.participants.contains { $0.user == user } ? replica.attachments.first { $0.id == attachmentID }?.checksum : nil
        }
        guard let checksum, let path = journal.path(forChecksum: checksum) else {
            throw CloudKitError(.notFound, "no attachment '\(attachmentID.uuidString)' in a session you joined")
        }
        return path
    }

    private func broadcastAttachments(_ session: LiveSession, _ state: borrowing LiveSession.State) {
        LiveSession.broadcast(["type": "journal.attachments", "sessionID": .string(session.id.uuidString),
                               "attachments": .array(state.attachments.map(\.json))], to: state.participants)
    }
}
