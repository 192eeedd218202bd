public import Foundation
internal import TandemCore

/// Who has a collaboration open now: what `SWCollaborationView` shows as
/// `activeParticipantCount` (decisions R27–R30).
public struct CollaborationPresence: Sendable, Hashable {
    /// The collaboration (`CollaborationHighlight.collaborationIdentifier`).
    public var collaborationIdentifier: String
    /// How many people have it open now (a person on several devices counts once), you included
    /// when you opened it.
    public var activeParticipantCount: Int
    /// Those people, by user record ID, sorted; their names and pictures come with attributions,
    /// notices and share participants (R32).
    public var activeParticipants: [UserIdentity]

    public init(collaborationIdentifier: String, activeParticipantCount: Int, activeParticipants: [UserIdentity]) {
        self.collaborationIdentifier = collaborationIdentifier
        self.activeParticipantCount = activeParticipantCount
        self.activeParticipants = activeParticipants
    }

    init(json: JSONValue) {
        let names = (json["participants"]?.arrayValue ?? []).compactMap(\.stringValue)
        self.init(collaborationIdentifier: json["collaborationIdentifier"]?.stringValue ?? "",
                  activeParticipantCount: json["activeParticipantCount"]?.int64Value.map(Int.init) ?? names.count,
                  activeParticipants: names.map { UserIdentity(lookupInfo: UserIdentity.LookupInfo(userRecordID: Record.ID(recordName: $0))) })
    }
}

extension Container {
    /// Presence in a collaboration, over the stream WebSocket (`presence.open` / `presence.watch`):
    /// the current state at once, then again after every change, until you stop iterating.
    ///
    /// With `isOpen` you count as having the item open for as long as you iterate (renewed every
    /// 20 seconds; the server ends it a minute after the last renewal, or when the connection
    /// closes); without, you only watch. Only the collaboration's owner, the members of
    /// conversations that shared it and, for a share, its accepted participants are answered;
    /// others learn nothing. Each iteration opens its own connection and reconnects with backoff.
    /// - Parameters:
    ///   - collaborationIdentifier: a collaboration highlight's `collaborationIdentifier`
    ///     (`share:{shortGUID}` for a Tandem share).
    ///   - isOpen: whether this device has the item open (counts) or only shows the count.
    /// - Throws (from the sequence): `unknownItem` for an unknown collaboration or one you are
    ///   not a participant of; `notAuthenticated` without a signed-in user.
    public func collaborationPresence(_ collaborationIdentifier: String, isOpen: Bool = true)
        -> AsyncThrowingStream<CollaborationPresence, any Error> {
        let subscribe: JSONValue = ["type": .string(isOpen ? "presence.open" : "presence.watch"),
                                    "collaborationIdentifier": .string(collaborationIdentifier)]
        let envelopes = StreamEnvelopes(transport: transport, types: ["presence", "error"], greeting: [subscribe], renewal: 20)
        let source = envelopes.stream { envelope -> JSONValue? in
            envelope["collaborationIdentifier"]?.stringValue == collaborationIdentifier ? envelope : nil
        }
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: CollaborationPresence.self)
        let task = Task {
            do {
                for try await envelope in source {
                    if envelope["type"]?.stringValue == "error" {
                        continuation.finish(throwing: TandemError(.unknownItem, envelope["reason"]?.stringValue ?? "no such collaboration"))
                        return
                    }
                    continuation.yield(CollaborationPresence(json: envelope))
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }
}
