import Foundation
import TandemCore
import TandemHTTP
import TandemStore

/// Activity invitations over HTTP (`/tandem/1/{container}/{environment}/activities/invitations/…`,
/// decisions R19–R22). Using one — joining or starting the session — happens on the stream
/// WebSocket (`invitation.open`), where sessions live (G3).
///
/// | operation | body | answer |
/// |---|---|---|
/// | `create` | `{conversationID, activity, lifetime?}` (seconds, default 86,400, at most 30 days; any other key `BAD_REQUEST`, R42) | `{invitationID, url, code, conversationID, creator, activity, createdAt, expiresAt}` |
/// | `lookup` | `{invitation}` (URL, token or join code) | members: `{canJoin: true, invitationID, conversationID, creator, activity, expiresAt}`; others `{canJoin: false, activity: {identifier, metadata: {type, fallbackURL?}}, expiresAt}`; unusable `NOT_FOUND` (one answer, R40); too many `THROTTLED` (R39) |
/// | `revoke` | `{invitationID}` | `{}`; `NOT_FOUND` unless the caller created it |
enum ActivityInvitationRoutes {
    static func routes(_ services: Services) -> [DatabaseRoute] {
        let invitations = services.activityInvitations
        return [
            DatabaseRoute(operation: "activities/invitations/create", method: "POST", databases: [],
                          summary: "Makes an activity invitation (a URL and a join code) for a conversation: {conversationID, activity, lifetime?}",
                          requestSchema: "ActivityInvitationCreateRequest", responseSchema: "ActivityInvitation") { context in
                let creator = try ConversationRoutes.user(context)
                let body = try context.jsonBody()
                try RequestContext.refuseUnknownKeys(body, known: ["conversationID", "activity", "lifetime"], noun: "key",
                                                     listing: "an invitation's keys are conversationID, activity and lifetime")
                let lifetime: Int64?
                switch body["lifetime"] {
                case nil: lifetime = nil
                case .int(let seconds)?: lifetime = seconds
                default: throw CloudKitError.badRequest("'lifetime' must be a whole number of seconds")
                }
                let made = try invitations.create(creator: creator,
                                                  conversationID: try ConversationRoutes.string(body, "conversationID"),
                                                  activity: try SessionActivity.parse(body["activity"]), lifetime: lifetime,
                                                  container: context.container, environment: context.environment)
                return Responses.json(ActivityInvitations.json(made, baseURL: context.baseURL))
            },
            DatabaseRoute(operation: "activities/invitations/lookup", method: "POST", databases: [],
                          summary: "What the caller may see of an activity invitation: {invitation: URL | token | code}",
                          requestSchema: "ActivityInvitationReference", responseSchema: "ActivityInvitationPreview") { context in
                let user = try ConversationRoutes.user(context)
                let (invitation, activity) = try invitations.usable(try ConversationRoutes.string(try context.jsonBody(), "invitation"), user: user,
                                                                    container: context.container, environment: context.environment)
                return Responses.json(ActivityInvitations.preview(invitation, activity, member: try invitations.admits(user, invitation)))
            },
            DatabaseRoute(operation: "activities/invitations/revoke", method: "POST", databases: [],
                          summary: "Revokes an activity invitation the caller made: {invitationID}",
                          requestSchema: "ActivityInvitationRevokeRequest", responseSchema: "Empty") { context in
                let creator = try ConversationRoutes.user(context)
                try invitations.revoke(id: try ConversationRoutes.string(try context.jsonBody(), "invitationID"), creator: creator)
                return Responses.json(.object([:]))
            },
        ]
    }
}
