import TandemCore
import TandemStore

/// What a share page shows one viewer (decisions C12–C15): read in one store transaction, so the
/// page never mixes two states of the share.
///
/// What a viewer may see follows D7: a stranger sees the title, thumbnail and owner only of a
/// public share; a private share (and a URL naming no share) gets the same generic page, with a
/// request button when the owner allows access requests.
struct SharePageView {
    /// The viewer's relation to the share, which decides the page's actions.
    enum Standing: Equatable {
        /// Not signed in: a "Sign in" link that comes back here (A47).
        case signedOut
        /// The owner: the whole management page (C14).
        case owner
        /// An accepted `ADMINISTRATOR`: participants and invitations, and leaving; not the public
        /// link, roles or stopping the share (the service refuses those to administrators).
        case administrator
        /// An accepted participant (`USER` or `PUBLIC_USER`): leave.
        case participant(Share.Permission)
        /// Invited and not yet answered: accept or decline.
        case invitee
        /// Signed in with no part in a public share: join it (accept as a public user).
        case publicVisitor
        /// Signed in with no part in a private share that takes access requests.
        case mayRequest(alreadyAsked: Bool)
        /// Anything else, including a URL that names no share: "not available".
        case unavailable
    }

    /// One row of the participant list a manager sees.
    struct Participant {
        var participantID: String
        var name: String
        var contact: String
        var role: Share.Role
        var permission: Share.Permission
        var status: Share.AcceptanceStatus
        var declined: Bool
        /// The viewer's own row.
        var isViewer: Bool
    }

    /// A person who asked to join (D7).
    struct Requester {
        var userRecordName: String
        var name: String
    }

    var standing: Standing
    /// Shown only to whom may see it (D7); otherwise "Shared item".
    var title = "Shared item"
    var ownerName: String?
    var hasThumbnail = false
    /// The item's uniform type identifier (`cloudkit.type`), shown with the title (R5).
    var type: String?
    var publicPermission: Share.Permission = .none
    var allowsAccessRequests = false
    /// The sharing options in force (R18): managers are offered only these choices.
    var allowed = AllowedSharingOptions.standard
    var participants: [Participant] = []
    var requesters: [Requester] = []
    /// Who is signed in, as the page names them.
    var viewerName: String?

    var isManager: Bool { standing == .owner || standing == .administrator }

    /// Reads what `viewer` may see of `found`.
    static func read(_ reader: any StoreReading, _ found: StoredShare?, viewer: UserAccount?) throws -> SharePageView {
        var view = SharePageView(standing: .unavailable)
        view.viewerName = viewer.map { $0.email ?? $0.recordName }
        guard let viewer else {
            view.standing = .signedOut
            if let found, found.publicPermission != .none { try view.describe(reader, found) }
            return view
        }
        guard let share = found else { return view }
        let standing = try ShareService.standing(reader, share, user: viewer)
        switch standing.principal {
        case .owner: view.standing = .owner
        case .participant(.administrator, _): view.standing = .administrator
        case .participant(_, let permission): view.standing = .participant(permission)
        case .invited: view.standing = .invitee
        case .removed, .stranger, .anonymous:
            if share.publicPermission != .none && !standing.facts.callerIsBlocked {
                view.standing = .publicVisitor
            } else if share.allowsAccessRequests && !standing.facts.callerIsBlocked {
                view.standing = .mayRequest(alreadyAsked: try reader.requesters(share: share).contains(viewer.recordName))
            }
        }
        switch view.standing {
        case .unavailable, .mayRequest: return view
        default: break
        }
        try view.describe(reader, share)
        if view.isManager {
            if let container = try reader.share(shortGUID: share.shortGUID)?.container {
                // Options with nothing in common offer nothing new; a save would say why.
                view.allowed = (try? SharingOptionsPolicy.effective(reader, share: share, container: container))
                    ?? AllowedSharingOptions(permission: .readOnly, access: .specifiedRecipientsOnly)
            }
            view.participants = try reader.participants(share: share)
                .filter { $0.status != .removed || $0.isDeclined }
                .map { participant in
                    let name = try participant.userRecordName.map { try ShareInvitations.name(reader, of: $0) }
                    return Participant(participantID: participant.participantID, name: name ?? participant.email ?? participant.phone ?? "Someone",
                                       contact: participant.email ?? participant.phone ?? "", role: participant.role,
                                       permission: participant.permission, status: participant.status, declined: participant.isDeclined,
                                       isViewer: participant.userRecordName == viewer.recordName)
                }
            view.requesters = try reader.requesters(share: share).map { Requester(userRecordName: $0, name: try ShareInvitations.name(reader, of: $0)) }
        }
        return view
    }

    private mutating func describe(_ reader: any StoreReading, _ share: StoredShare) throws {
        title = try ShareInvitations.title(reader, share)
        // Named as invitations name people, but never by email: strangers may read this page.
        let name = try ShareInvitations.name(reader, of: share.owner)
        ownerName = name.contains("@") ? "Someone" : name
        let record = try reader.record(zone: share.zone, name: share.recordName)
        hasThumbnail = record?.fields["cloudkit.thumbnailImageData"] != nil
        if case .string(let value)? = record?.fields["cloudkit.type"], !value.isEmpty { type = String(value.prefix(256)) }
        publicPermission = share.publicPermission
        allowsAccessRequests = share.allowsAccessRequests
    }
}
