/// A share's state beyond its record fields: who takes part, with which role and permission,
/// and how people without an invitation may join (CloudKit's `CKShare`).
///
/// Wire strings: CloudKit Web Services, Types ("Share Participant"); Tandem decisions D1 (pending
/// is `INVITED` on the wire), D6 (administrators), D7 (access requests), D8 (participant limit).
public struct Share: Sendable, Hashable {
    /// The share record's type (`CKRecordTypeShare`).
    public static let recordType = "cloudkit.share"
    /// The record name every zone-wide share has (`CKRecordNameZoneWideShare`, decisions D4).
    public static let zoneWideRecordName = "cloudkit.zoneshare"
    /// The optional system fields a share record may carry (`CKShare.SystemFieldKey`).
    public static let systemFields: Set<String> = ["cloudkit.title", "cloudkit.type", "cloudkit.thumbnailImageData"]

    /// `NONE`, `READ_ONLY`, `READ_WRITE` (and `UNKNOWN`, never stored).
    public enum Permission: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case none = "NONE"
        case readOnly = "READ_ONLY"
        case readWrite = "READ_WRITE"
    }

    /// A participant's role (the wire key is `type`): `OWNER`, `ADMINISTRATOR`, `USER`, `PUBLIC_USER`.
    public enum Role: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case owner = "OWNER"
        case administrator = "ADMINISTRATOR"
        case privateUser = "USER"
        case publicUser = "PUBLIC_USER"
    }

    /// `INVITED` (the framework's `pending`), `ACCEPTED`, `REMOVED`.
    public enum AcceptanceStatus: String, Sendable, CaseIterable {
        case unknown = "UNKNOWN"
        case pending = "INVITED"
        case accepted = "ACCEPTED"
        case removed = "REMOVED"
    }

    /// One person on a share.
    public struct Participant: Sendable, Hashable {
        /// Stable for the life of the participation (a UUID string).
        public var participantID: String
        public var identity: UserIdentity
        public var role: Role
        public var permission: Permission
        public var acceptanceStatus: AcceptanceStatus
        /// True when the participant was added by approving their access request.
        public var isApprovedRequester: Bool
        /// When the participant was added, in milliseconds since 1970.
        public var dateAddedToShare: Int64?

        public init(participantID: String, identity: UserIdentity, role: Role, permission: Permission,
                    acceptanceStatus: AcceptanceStatus, isApprovedRequester: Bool = false, dateAddedToShare: Int64? = nil) {
            self.participantID = participantID
            self.identity = identity
            self.role = role
            self.permission = permission
            self.acceptanceStatus = acceptanceStatus
            self.isApprovedRequester = isApprovedRequester
            self.dateAddedToShare = dateAddedToShare
        }
    }

    /// The token in the share URL (`/share/{shortGUID}`); stable per root record.
    public var shortGUID: String
    /// The share URL, when the server knows its base URL.
    public var url: String?
    /// The root record's name; nil for a zone-wide share.
    public var rootRecordName: String?
    public var publicPermission: Permission
    /// Everyone on the share the viewer may see, the owner first.
    public var participants: [Participant]
    /// The viewer's own participant, when they are one.
    public var currentUserParticipant: Participant?
    public var allowsAccessRequests: Bool
    /// Pending access requests; only owners and administrators see them.
    public var requesters: [UserIdentity]?
    /// People barred from requesting access; only owners and administrators see them.
    public var blockedIdentities: [UserIdentity]?
    /// The sharing choices this share allows: its own narrowing of the container's policy
    /// (`CKAllowedSharingOptions`, decisions R15–R17); `standard` when the app set none.
    public var allowedSharingOptions: AllowedSharingOptions = .standard

    public init(shortGUID: String, url: String? = nil, rootRecordName: String?, publicPermission: Permission,
                participants: [Participant], currentUserParticipant: Participant? = nil, allowsAccessRequests: Bool = false,
                requesters: [UserIdentity]? = nil, blockedIdentities: [UserIdentity]? = nil) {
        self.shortGUID = shortGUID
        self.url = url
        self.rootRecordName = rootRecordName
        self.publicPermission = publicPermission
        self.participants = participants
        self.currentUserParticipant = currentUserParticipant
        self.allowsAccessRequests = allowsAccessRequests
        self.requesters = requesters
        self.blockedIdentities = blockedIdentities
    }

    /// The owner participant.
    public var owner: Participant? { participants.first { $0.role == .owner } }
}
