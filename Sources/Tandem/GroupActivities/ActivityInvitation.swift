public import Foundation
internal import TandemCore

/// An invitation to an activity in a conversation (decisions R19–R22): a link and a short join
/// code that bring a member of the conversation into its group session, or start the activity
/// there when none is live. Tandem's counterpart of sharing a `GroupActivity` through `ShareLink`
/// (`GroupActivityTransferRepresentation`, `NSItemProvider.registerGroupActivity`, SharePlay over
/// AirDrop); made with `GroupActivities.makeInvitation(for:in:lifetime:)`.
///
/// ```swift
/// let invitation = try await activities.makeInvitation(for: Drawing(canvas: "A"), in: conversationID)
/// try await container.conversations.send(invitation, in: conversationID)   // shown as "Join"
/// print(invitation.url, invitation.code)                                    // https://…/activity/act_…  K3QZ-8TRM
/// // on another device of a member:
/// let session = try await activities.open(invitation: invitation.url.absoluteString, as: Drawing.self)
/// try await session.join()
/// ```
public struct ActivityInvitation: Sendable, Equatable, Identifiable {
    /// How the creator names it to revoke it (a UUID string; not a secret).
    public var id: String
    /// `{server}/activity/{token}`: whoever holds it can look the invitation up; members of the
    /// conversation can use it. Opened in a browser it shows the code and the fallback URL.
    public var url: URL
    /// The join code, `ABCD-EFGH` (8 characters of Crockford base32; case and dashes are ignored
    /// when it is typed back).
    public var code: String
    public var conversationID: String
    /// The creator's user record name.
    public var creator: String
    /// The activity's `activityIdentifier`.
    public var activityIdentifier: String
    public var metadata: GroupActivityMetadata
    public var creationDate: Date
    /// After this the invitation does nothing (R21).
    public var expirationDate: Date

    init?(json: JSONValue) {
        guard let id = json["invitationID"]?.stringValue, let url = json["url"]?.stringValue.flatMap(URL.init(string:)),
              let code = json["code"]?.stringValue, let activity = json["activity"] else { return nil }
        self.id = id
        self.url = url
        self.code = code
        conversationID = json["conversationID"]?.stringValue ?? ""
        creator = json["creator"]?.stringValue ?? ""
        activityIdentifier = activity["identifier"]?.stringValue ?? ""
        metadata = ActivityWire.metadata(activity)
        creationDate = Date(milliseconds: json["createdAt"]?.int64Value ?? 0)
        expirationDate = Date(milliseconds: json["expiresAt"]?.int64Value ?? 0)
    }

    /// What the signed-in user may see of an invitation (`GroupActivities.invitationPreview(_:)`).
    public struct Preview: Sendable, Equatable {
        /// True for a member of the conversation, who may `open` it; false for anyone else, who
        /// sees only `activityIdentifier`, `metadata.type` and `metadata.fallbackURL` (R20).
        public var canJoin: Bool
        /// nil unless `canJoin`.
        public var invitationID: String?
        /// nil unless `canJoin`.
        public var conversationID: String?
        public var activityIdentifier: String
        /// Complete for members; only `type` and `fallbackURL` for anyone else.
        public var metadata: GroupActivityMetadata
        public var expirationDate: Date

        init(json: JSONValue) {
            canJoin = json["canJoin"]?.boolValue ?? false
            invitationID = json["invitationID"]?.stringValue
            conversationID = json["conversationID"]?.stringValue
            activityIdentifier = json["activity"]?["identifier"]?.stringValue ?? ""
            metadata = json["activity"].map(ActivityWire.metadata) ?? GroupActivityMetadata()
            expirationDate = Date(milliseconds: json["expiresAt"]?.int64Value ?? 0)
        }
    }
}

extension ConversationEvent {
    /// The activity invitation this message carries, for an app to draw as a "Join" button
    /// (R22): the first link whose path is `/activity/{token}`, with the title it was sent with.
    /// Pass `url` to `GroupActivities.open(invitation:as:)`.
    public var activityInvitation: LinkAttachment? {
        guard kind == .message else { return nil }
        return links.first { link in
            let parts = link.url.path.split(separator: "/")
            return parts.count == 2 && parts[0] == "activity" && parts[1].hasPrefix("act_")
        }
    }
}

extension Conversations {
    /// Sends `invitation` into a conversation (usually its own): a message whose text is
    /// `text` (default "Join {title}") and whose one link is the invitation's URL with the
    /// activity's title, which receivers read as `ConversationEvent.activityInvitation`.
    /// - Throws: as `send(_:links:in:mode:)`.
    @discardableResult
    public func send(_ invitation: ActivityInvitation, text: String? = nil, in conversation: String) async throws(TandemError) -> ConversationEvent {
        let title = invitation.metadata.title ?? "the activity"
        return try await send(text ?? "Join \(title)", links: [LinkAttachment(url: invitation.url, title: invitation.metadata.title)],
                              in: conversation)
    }
}
