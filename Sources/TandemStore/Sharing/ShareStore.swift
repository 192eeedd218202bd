public import TandemCore

/// A share as stored: the share record's identity plus the state CloudKit keeps beside it.
/// The owner is the zone's owner and is not stored as a participant.
public struct StoredShare: Sendable, Hashable {
    public var key: Int64
    public var zone: StoredZone
    /// The share record's name (`cloudkit.zoneshare` for a zone-wide share).
    public var recordName: String
    /// The root record of a hierarchical share; nil for a zone-wide share.
    public var rootRecordName: String?
    public var shortGUID: String
    public var publicPermission: Share.Permission
    public var allowsAccessRequests: Bool
    public var createdAt: Int64

    public init(key: Int64, zone: StoredZone, recordName: String, rootRecordName: String?, shortGUID: String,
                publicPermission: Share.Permission, allowsAccessRequests: Bool, createdAt: Int64) {
        self.key = key
        self.zone = zone
        self.recordName = recordName
        self.rootRecordName = rootRecordName
        self.shortGUID = shortGUID
        self.publicPermission = publicPermission
        self.allowsAccessRequests = allowsAccessRequests
        self.createdAt = createdAt
    }

    /// The zone owner's user record name.
    public var owner: String { zone.zoneID.ownerRecordName ?? "" }
    public var isZoneWide: Bool { rootRecordName == nil }
}

/// A participant other than the owner, as stored. `userRecordName` is nil for an invitee without
/// an account; they are linked when an account with that email or phone appears.
public struct StoredParticipant: Sendable, Hashable {
    public var participantID: String
    public var userRecordName: String?
    public var email: String?
    public var phone: String?
    public var role: Share.Role
    public var permission: Share.Permission
    public var status: Share.AcceptanceStatus
    public var isApprovedRequester: Bool
    public var addedAt: Int64
    /// When the person declined the invitation (`shares/declineInvitation`), milliseconds since
    /// 1970; nil otherwise. Only a `REMOVED` participant has one: it is shown to the share's
    /// managers as `REMOVED` until the owner saves the share without it (decisions A44).
    public var declinedAt: Int64?

    public init(participantID: String, userRecordName: String?, email: String?, phone: String?, role: Share.Role,
                permission: Share.Permission, status: Share.AcceptanceStatus, isApprovedRequester: Bool, addedAt: Int64,
                declinedAt: Int64? = nil) {
        self.participantID = participantID
        self.userRecordName = userRecordName
        self.email = email
        self.phone = phone
        self.role = role
        self.permission = permission
        self.status = status
        self.isApprovedRequester = isApprovedRequester
        self.addedAt = addedAt
        self.declinedAt = declinedAt
    }

    /// Whether this is an invitation the person declined (and the owner has not dropped yet).
    public var isDeclined: Bool { status == .removed && declinedAt != nil }
}

/// Reads of shares, participants and share membership.
public protocol ShareReading {
    func share(zone: StoredZone, recordName: String) throws -> StoredShare?
    func shares(zone: StoredZone) throws -> [StoredShare]
    /// The share a URL token names, within one container environment.
    func share(shortGUID: String, container: String, environment: Environment) throws -> StoredShare?
    /// The share a URL token names, in whichever container it is (share landing pages).
    func share(shortGUID: String) throws -> (share: StoredShare, container: String, environment: Environment)?
    /// The URL token once minted for this root (`""` for the zone-wide share), if any.
    func shortGUID(zone: StoredZone, rootName: String) throws -> String?
    /// Participants other than the owner, in the order they were added (removed ones included).
    func participants(share: StoredShare) throws -> [StoredParticipant]
    /// The caller's participation in each share of `zone`, by share key (invitees linked to the
    /// account only).
    func participations(zone: StoredZone, user: String) throws -> [Int64: StoredParticipant]
    /// Zones of `container`/`environment` in which `user` has accepted a share, with those shares.
    func acceptedShares(user: String, container: String, environment: Environment) throws -> [(StoredShare, StoredParticipant)]
    /// Everyone who has accepted a share in `zone` (the zone's shared-database viewers).
    func acceptedParticipants(zone: StoredZone) throws -> [String]
    /// The user record names of pending access requests, oldest first.
    func requesters(share: StoredShare) throws -> [String]
    func blockedUsers(share: StoredShare) throws -> [String]
    /// A record with the name of the share whose hierarchy contains it (its membership).
    func recordWithMembership(zone: StoredZone, name: String) throws -> (record: Record, membership: String?)?
    /// The names of `name` and every record below it through `parent`, and of those that are
    /// roots of a share.
    func subtree(zone: StoredZone, of name: String) throws -> (count: Int, shareRoots: [String])
    /// The account an identity's lookup info names (user record name, email or phone).
    func user(matching lookup: UserIdentity) throws -> UserAccount?
    /// People the user shares with (either side of a share they take part in), for
    /// `users/discover` without lookup infos.
    func sharingPartners(of user: String, container: String, environment: Environment) throws -> [UserAccount]
    /// Whether `person` and `other` are members of one conversation, or the owner or accepted
    /// participants of one share, in any container: the people who see each other's name and
    /// picture (decisions R32). False for the same person (ask that first) and for strangers.
    func sharesConversationOrShare(_ person: String, with other: String) throws -> Bool
    /// The chain of parents above `name`, nearest first (stops at a cycle or `limit`).
    func ancestors(zone: StoredZone, of name: String, limit: Int) throws -> [String]
    /// The share's own sharing options (`standard` unless an app narrowed them, R16).
    func allowedSharingOptions(share: StoredShare) throws -> AllowedSharingOptions
    /// The operator's sharing options for `container` (`standard` unless set, R15); nil when
    /// there is no such container.
    func allowedSharingOptions(container: String) throws -> AllowedSharingOptions?
}

/// Writes of shares, participants and share membership, inside a transaction.
public protocol ShareWriting: ShareReading {
    /// Inserts or updates a share (by zone and record name); returns it with its key.
    func putShare(_ share: StoredShare) throws -> StoredShare
    /// Deletes a share with its participants, requests and block list, and clears the
    /// membership of every record it covered. Its URL token stays reserved for the root.
    func deleteShare(_ share: StoredShare) throws
    func mintShortGUID(zone: StoredZone, rootName: String, guid: String) throws
    /// Inserts or updates a participant (by `participantID`).
    func putParticipant(_ participant: StoredParticipant, share: StoredShare) throws
    func deleteParticipant(participantID: String) throws
    func addRequester(_ user: String, share: StoredShare, at time: Int64) throws
    func removeRequester(_ user: String, share: StoredShare) throws
    func setBlocked(_ user: String, blocked: Bool, share: StoredShare, at time: Int64) throws
    /// Sets the membership of `name` and every record below it, except below the root of another
    /// share (those stay in theirs); each moved record gets a new zone sequence and, when it
    /// left a share, an exit. Returns how many records changed.
    @discardableResult
    func setMembership(zone: StoredZone, subtreeOf name: String, to membership: String?) throws -> Int
    /// Links invitations addressed to this email or phone to the account.
    func linkInvitations(user: UserAccount) throws
    func setDiscoverable(user: String, _ discoverable: Bool) throws
    /// Stores the share's own sharing options (R16); they go with the share when it is deleted.
    func setAllowedSharingOptions(_ options: AllowedSharingOptions, share: StoredShare) throws
    /// Stores the operator's sharing options for `container` (R15); false when there is no
    /// such container.
    func setAllowedSharingOptions(_ options: AllowedSharingOptions, container: String) throws -> Bool
}
