internal import TandemCore

extension Share {
    /// Access a participant or the public has (`CKShare.ParticipantPermission`).
    public enum ParticipantPermission: String, Sendable, Hashable {
        case unknown = "UNKNOWN", none = "NONE", readOnly = "READ_ONLY", readWrite = "READ_WRITE"
    }

    /// A participant's role (`CKShare.ParticipantRole`); administrators manage participants (D6).
    public enum ParticipantRole: String, Sendable, Hashable {
        case unknown = "UNKNOWN", owner = "OWNER", administrator = "ADMINISTRATOR", privateUser = "USER", publicUser = "PUBLIC_USER"
    }

    /// Where an invitation stands (`CKShare.ParticipantAcceptanceStatus`); `pending` is `INVITED` on the wire (D1).
    public enum ParticipantAcceptanceStatus: String, Sendable, Hashable {
        case unknown = "UNKNOWN", pending = "INVITED", accepted = "ACCEPTED", removed = "REMOVED"
    }

    /// One person on a share (`CKShare.Participant`).
    ///
    /// Invite someone by adding `Participant(lookupInfo:permission:)` to a share and saving it;
    /// the server finds (or later links) the person by email, phone or user record name
    /// (decisions T2). CloudKit asks the app to fetch the participant first
    /// (`fetchShareParticipant`); Tandem resolves the lookup at save time.
    public struct Participant: Sendable, Hashable {
        /// Stable for the life of the participation; nil until the share is saved.
        public internal(set) var participantID: String?
        public internal(set) var userIdentity: UserIdentity
        public var role: ParticipantRole
        public var permission: ParticipantPermission
        public internal(set) var acceptanceStatus: ParticipantAcceptanceStatus
        /// True when added by approving an access request (D7).
        public internal(set) var isApprovedRequester: Bool

        /// A new invitee: `permission` `.readOnly` or `.readWrite`, role `.privateUser` or `.administrator`.
        public init(lookupInfo: UserIdentity.LookupInfo, permission: ParticipantPermission = .readOnly,
                    role: ParticipantRole = .privateUser) {
            userIdentity = UserIdentity(lookupInfo: lookupInfo)
            self.role = role
            self.permission = permission
            acceptanceStatus = .unknown
            isApprovedRequester = false
        }

        init(wire: TandemCore.Share.Participant) {
            participantID = wire.participantID
            userIdentity = UserIdentity(wire: wire.identity)
            role = ParticipantRole(rawValue: wire.role.rawValue) ?? .unknown
            permission = ParticipantPermission(rawValue: wire.permission.rawValue) ?? .unknown
            acceptanceStatus = ParticipantAcceptanceStatus(rawValue: wire.acceptanceStatus.rawValue) ?? .unknown
            isApprovedRequester = wire.isApprovedRequester
        }

        /// The request form (decisions T1/T2): the participant ID when known, else the lookup info.
        var request: JSONValue {
            var o = JSONObject()
            if let participantID {
                o["participantId"] = .string(participantID)
            } else {
                var lookup = JSONObject()
                if let email = userIdentity.lookupInfo?.emailAddress { lookup["emailAddress"] = .string(email) }
                if let phone = userIdentity.lookupInfo?.phoneNumber { lookup["phoneNumber"] = .string(phone) }
                if let id = userIdentity.lookupInfo?.userRecordID { lookup["userRecordName"] = .string(id.recordName) }
                o["userIdentity"] = .object(["lookupInfo": .object(lookup)])
            }
            if role != .unknown { o["type"] = .string(role.rawValue) }
            if permission == .readOnly || permission == .readWrite { o["permission"] = .string(permission.rawValue) }
            return .object(o)
        }
    }
}
