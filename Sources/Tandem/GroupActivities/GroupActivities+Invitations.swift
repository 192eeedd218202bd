public import Foundation
internal import TandemCore

/// Activity invitations (decisions R19–R22): made and revoked over HTTP, used on the stream.
extension GroupActivities {
    /// Makes an invitation to `activity` in `conversationID` (SharePlay: sharing a
    /// `GroupActivity` with `ShareLink`; `GroupActivityTransferRepresentation`). Its preview
    /// image, if any, is uploaded first (G11).
    /// - Parameter lifetime: seconds until it expires, 1…2,592,000 (30 days); default one day (R21).
    /// - Throws: `unknownItem` when you are not a member of the conversation (or it does not
    ///   exist), `invalidArguments` for a bad activity or lifetime.
    public func makeInvitation<Activity: GroupActivity>(for activity: Activity, in conversationID: String,
                                                        lifetime: TimeInterval = 86_400) async throws(TandemError) -> ActivityInvitation {
        let body: JSONValue = .object(["conversationID": .string(conversationID), "activity": try await ActivityWire.prepare(activity, link),
                                       "lifetime": .int(Int64(lifetime.rounded()))])
        let answer = try await link.transport.json(link.transport.tandemURL("activities/invitations/create"), body: body)
        guard let invitation = ActivityInvitation(json: answer) else { throw TandemError(.serverResponseLost, "the invitation answer was incomplete") }
        return invitation
    }

    /// What you may see of the invitation `reference` names: its URL, the token in it, or its
    /// join code. Anyone signed in may ask; only members of its conversation see more than the
    /// activity's type and `fallbackURL` (R20).
    /// - Throws: `unknownItem` for an unknown, expired or revoked invitation (one answer, R40);
    ///   `requestRateLimited` with `retryAfterSeconds` after more than 20 lookups that found nothing (R39).
    public func invitationPreview(_ reference: String) async throws(TandemError) -> ActivityInvitation.Preview {
        ActivityInvitation.Preview(json: try await link.transport.json(link.transport.tandemURL("activities/invitations/lookup"),
                                                                      body: ["invitation": .string(reference)]))
    }

    /// Revokes an invitation you made: it stops working at once, for everyone (R21).
    /// - Throws: `unknownItem` for one that is not yours, unknown or already revoked.
    public func revokeInvitation(_ invitation: ActivityInvitation) async throws(TandemError) {
        _ = try await link.transport.json(link.transport.tandemURL("activities/invitations/revoke"),
                                          body: ["invitationID": .string(invitation.id)])
    }

    /// Uses the invitation `reference` names (URL, token or join code): its conversation becomes
    /// active on this device (D35), and you get the conversation's live session, or a new one of
    /// the invitation's activity when none was live (you are its initiator). Not joined yet:
    /// call `join()`. The session is also delivered to `Activity.sessions(on:)`.
    /// - Throws: `unknownItem` for an unknown, expired or revoked invitation (one answer, R40);
    ///   `requestRateLimited` with `retryAfterSeconds` after more than 20 lookups and opens that
    ///   found nothing (one back every 30 s, R39); `permissionFailure`
    ///   when you are not a member of its conversation (show `invitationPreview(_:)`'s
    ///   `fallbackURL` instead); `tooManyParticipants` for a full conversation; `activityConflict`
    ///   when the conversation's live session is of another activity than `Activity`.
    public func open<Activity: GroupActivity>(invitation reference: String, as type: Activity.Type) async throws(TandemError) -> GroupSession<Activity> {
        let answer = try await link.request("invitation.open", ["invitation": .string(reference)])
        guard let conversationID = answer["conversationID"]?.stringValue, let json = answer["session"] else {
            throw TandemError(.serverResponseLost, "the invitation answer had no session")
        }
        link.declareLocally(conversationID)
        guard let core = link.available(json) else { throw TandemError(.serverResponseLost, "the invitation answer had no session") }
        guard core.identifier == Activity.activityIdentifier else {
            throw TandemError(.activityConflict, "the conversation's live session is of '\(core.identifier)', not '\(Activity.activityIdentifier)'")
        }
        return GroupSession<Activity>(core: core)
    }
}
