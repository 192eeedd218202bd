import Foundation
import TandemCore
import TandemStore

/// Using an activity invitation on the stream (`invitation.open`; decisions R20).
extension SessionHub {
    /// Opens the invitation `reference` names (URL, token or join code) from `connection`: the
    /// invitation's conversation becomes the connection's active one (D35), then the answer is
    /// the conversation's live session, whatever its activity (SharePlay joins the session the
    /// conversation has), or, when none is live, a new session of the invitation's activity
    /// with the opener as initiator. Nobody is joined yet: the client joins as usual (G4).
    /// - Returns: `{conversationID, started, session}`.
    /// - Throws: `THROTTLED` with `retryAfter` after too many lookups (R39, shared with
    ///   `activities/invitations/lookup`); `NOT_FOUND`, one answer, for an unknown, expired or
    ///   revoked invitation (R40); `ACCESS_DENIED` for
    ///   someone who is not a member of its conversation (they see its `fallbackURL` instead);
    ///   `TOO_MANY_PARTICIPANTS` when the conversation is full (D35).
    func open(_ connection: any SessionPeer, invitation reference: String) throws -> JSONValue {
        guard let invitations else { throw CloudKitError(.notFound, ActivityInvitations.unusable) }
        let client = try client(connection)
        let (invitation, activity) = try invitations.usable(reference, user: client.user, container: client.container,
                                                            environment: client.environment)
        guard try invitations.admits(client.user, invitation) else {
            throw CloudKitError(.accessDenied, "only members of the invitation's conversation may use it; look it up for its fallbackURL")
        }
        let conversation = invitation.conversationID
        declare(connection, conversation, active: true)
        let live = registry.withLock { registry -> JSONValue? in
            let local = registry.sessions.values.first {
                $0.conversationID == conversation && $0.container == client.container && $0.environment == client.environment
            }
            if let local { return local.state.withLock { $0.ended ? nil : local.json($0.activity) } }
            return registry.remote.values.first {
                $0.conversationID == conversation && $0.container == client.container && $0.environment == client.environment
            }?.json
        }
        if let live { return .object(["conversationID": .string(conversation), "started": false, "session": live]) }
        let session = try activate(connection, conversationID: conversation, activity: activity, replace: false)
        return .object(["conversationID": .string(conversation), "started": true, "session": session])
    }
}
