internal import TandemCore

/// What sending a share's URL into a conversation does: the share sheet's choice between
/// *Collaborate* and *Send copy* (SharedWithYou collaboration article).
///
/// ```swift
/// try await container.conversations.send("Plan with me \(share.url!)", in: chat.id, mode: .collaborate())
/// ```
///
/// With `.collaborate`, every member of the conversation at that moment (you aside) becomes an
/// invited participant of each Tandem share the message links, and accepts it as any
/// invitation (`Container.accept(_:)`); people joining the conversation later come through
/// membership prompts. Only the share's owner or an accepted administrator may; anyone else
/// gets `TandemError` `.permissionFailure` and nothing is sent. A message with no share URL
/// is `.invalidArguments`; a full share `.tooManyParticipants` (server codes
/// `ACCESS_DENIED`, `BAD_REQUEST`, `TOO_MANY_PARTICIPANTS`; decisions R1–R3).
public enum ShareMode: Sendable, Hashable {
    /// The link only: a collaboration highlight for the members, nobody is invited (the default).
    case sendCopy
    /// Invite the members with `permission` (`.readOnly` or `.readWrite`).
    case collaborate(permission: Share.ParticipantPermission = .readWrite)

    /// The request fields (`shareMode`, `permission`) of `conversations/messages/send`.
    var fields: JSONObject {
        switch self {
        case .sendCopy: ["shareMode": "sendCopy"]
        case .collaborate(let permission): ["shareMode": "collaborate", "permission": .string(permission.rawValue)]
        }
    }
}
