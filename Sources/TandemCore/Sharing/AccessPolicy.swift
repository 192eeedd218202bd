/// The one place that decides who may do what with shared data (DESIGN.md §6).
///
/// Pure: the caller works out the principal's relation to the share covering the target
/// (`Principal`) and names the action; the policy answers allow or deny with the error a client
/// sees. Sources: CloudKit's sharing rules (cloudkit.md §2.1, §2.4, §2.7, §2.8) and Tandem
/// decisions D5–D7. A stranger is never told that something exists: denials to people outside
/// a share are `NOT_FOUND`, the same answer as for data that does not exist.
public enum AccessPolicy {
    /// Who the caller is with respect to one share.
    public enum Principal: Sendable, Hashable {
        /// The owner of the zone (and so of every share in it).
        case owner
        /// An accepted participant with this role (`administrator`, `privateUser`, `publicUser`) and permission.
        case participant(Share.Role, Share.Permission)
        /// Invited (`INVITED`), not accepted yet.
        case invited
        /// Was a participant; removed or left.
        case removed
        /// Signed in, no relation to the share.
        case stranger
        /// Not signed in.
        case anonymous
    }

    /// What the caller wants to do.
    public enum Action: Sendable, Hashable {
        /// Fetch or query a record in the share (including the share record itself).
        case read
        /// Create a record in the share, or change one.
        case write
        /// Delete a record of the share other than its root.
        case delete
        /// Delete the share's root record.
        case deleteRoot
        /// Change the share's participants, their permissions, or `allowsAccessRequests`.
        case manageParticipants
        /// Change `publicPermission`.
        case changePublicPermission
        /// Delete the share record: for the owner, stop sharing; for a participant, leave (D5).
        case deleteShare
        /// Fetch the share's metadata by its URL (records/resolve).
        case resolve
        /// Accept the share (records/accept).
        case accept
        /// Ask to join (D7 `requestAccess`).
        case requestAccess
        /// Approve, deny, block or unblock requesters (D7).
        case manageRequests
        /// Decline an invitation not yet accepted (`shares/declineInvitation`; A33).
        case declineInvitation
    }

    /// The facts about the share an answer may depend on.
    public struct ShareFacts: Sendable, Hashable {
        public var publicPermission: Share.Permission
        public var allowsAccessRequests: Bool
        /// The caller is on the share's block list.
        public var callerIsBlocked: Bool

        public init(publicPermission: Share.Permission, allowsAccessRequests: Bool = false, callerIsBlocked: Bool = false) {
            self.publicPermission = publicPermission
            self.allowsAccessRequests = allowsAccessRequests
            self.callerIsBlocked = callerIsBlocked
        }
    }

    public enum Decision: Sendable, Hashable {
        case allow
        case deny(ServerErrorCode, String)

        public var isAllowed: Bool { self == .allow }

        /// Throws the denial as a `CloudKitError`.
        public func enforce() throws(CloudKitError) {
            if case .deny(let code, let reason) = self { throw CloudKitError(code, reason) }
        }
    }

    /// The one reason given for everything hidden from the caller, and for what does not exist,
    /// so the two cannot be told apart.
    public static let hiddenReason = "no such record or share (or you are not a participant of it)"

    /// The decision for `principal` doing `action` on a share described by `share`.
    public static func decide(_ principal: Principal, _ action: Action, share: ShareFacts) -> Decision {
        let hidden = Decision.deny(.notFound, hiddenReason)
        switch principal {
        case .anonymous:
            return .deny(.authenticationRequired, "sign in to use shared data")
        case .owner:
            switch action {
            case .requestAccess: return .deny(.badRequest, "you own this share")
            case .declineInvitation: return .deny(.badRequest, "you own this share; delete the share record to stop sharing")
            default: return .allow
            }
        case .invited, .removed, .stranger:
            switch action {
            case .resolve, .accept:
                // Anyone with the URL of a public share may see its metadata and join, unless blocked.
                if (share.publicPermission == .readOnly || share.publicPermission == .readWrite) && !share.callerIsBlocked { return .allow }
                return principal == .invited ? .allow : hidden
            case .requestAccess:
                if principal == .invited {
                    return .deny(.participantAlreadyInvited, "you are already invited to this share; accept the invitation instead")
                }
                return share.allowsAccessRequests && !share.callerIsBlocked ? .allow : hidden
            case .declineInvitation:
                return principal == .invited ? .allow : hidden
            default:
                return hidden
            }
        case .participant(let role, let permission):
            switch action {
            case .read, .resolve, .accept, .deleteShare:
                return .allow
            case .write, .delete:
                return permission == .readWrite ? .allow
                    : .deny(.accessDenied, "your permission on this share is \(permission.rawValue); writing needs READ_WRITE")
            case .deleteRoot:
                return .deny(.accessDenied, "only the owner may delete the root record of a share")
            case .manageParticipants, .manageRequests:
                return role == .administrator ? .allow
                    : .deny(.accessDenied, "only the owner or an administrator may manage the share's participants and requests")
            case .changePublicPermission:
                return .deny(.accessDenied, "only the owner may change a share's publicPermission")
            case .requestAccess:
                return .deny(.participantAlreadyInvited, "you are already a participant of this share")
            case .declineInvitation:
                return .deny(.badRequest, "you accepted this share; to leave it, delete the share record from your shared database")
            }
        }
    }
}
