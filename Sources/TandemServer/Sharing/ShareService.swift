public import TandemCore
public import TandemStore

/// Shares reached by URL: metadata (records/resolve), acceptance (records/accept), and access
/// requests with their approval (Tandem decisions D7). Every answer goes through `AccessPolicy`.
public struct ShareService: Sendable {
    public let store: any Store
    public let participantLimit: Int
    /// Told of share records changed by accept and access requests, after commit.
    var hub: ChangeHub?
    /// Refreshes the highlight lists of the conversations a share reached when its people
    /// change (a decline, a blocked participant, an approved requester; W19).
    var conversationHub: ConversationHub?

    public init(store: any Store, participantLimit: Int = Limits.participantsPerShare) {
        self.store = store
        self.participantLimit = participantLimit
    }

    /// CloudKit's share metadata (`CKShare.Metadata`; Web Services "ShortGUID result").
    public struct Metadata: Sendable {
        public var shortGUID: String
        public var container: String
        public var environment: Environment
        /// The share record with its share state; nil when the caller may only learn that they
        /// could ask for access or verify an invitation.
        public var share: Record?
        /// Nil when the caller may only verify an invitation or ask for access.
        public var zoneID: ZoneID?
        public var rootRecordName: String?
        public var rootRecord: Record?
        public var ownerIdentity: UserIdentity
        public var participantRole: Share.Role
        public var participantStatus: Share.AcceptanceStatus
        public var participantPermission: Share.Permission
        /// `PRIVATE` for the owner, `SHARED` for everyone else.
        public var databaseScope: String
        /// Invitees without an account yet, when the caller is not an invitee (contact details masked).
        public var potentialMatches: [(participantID: String, identity: UserIdentity)]
        /// The caller may ask to join (D7).
        public var allowsAccessRequests: Bool
    }

    /// One `shortGUIDs[]` entry: `value`, `shouldFetchRootRecord`, `rootRecordDesiredKeys`.
    public struct ShortGUIDRequest: Sendable {
        public var value: String
        public var shouldFetchRootRecord: Bool
        public var rootRecordDesiredKeys: Set<String>?

        public init(value: String, shouldFetchRootRecord: Bool = false, rootRecordDesiredKeys: Set<String>? = nil) {
            self.value = value
            self.shouldFetchRootRecord = shouldFetchRootRecord
            self.rootRecordDesiredKeys = rootRecordDesiredKeys
        }
    }

    /// The caller's standing on a share reached by URL.
    struct Standing {
        var share: StoredShare
        var participation: StoredParticipant?
        var principal: AccessPolicy.Principal
        var facts: AccessPolicy.ShareFacts
    }

    static func standing(_ reader: any StoreReading, _ share: StoredShare, user: UserAccount) throws -> Standing {
        let blocked = try reader.blockedUsers(share: share).contains(user.recordName)
        let facts = ZoneAccess.facts(share, blocked: blocked)
        if user.recordName == share.owner { return Standing(share: share, participation: nil, principal: .owner, facts: facts) }
        let participants = try reader.participants(share: share)
        // The caller's own row, or an invitation to their email or phone not linked to an account yet.
        let mine = participants.first { $0.userRecordName == user.recordName && $0.status != .removed }
            ?? participants.first { $0.userRecordName == nil && $0.status != .removed
                && user.identity.isSamePerson(as: UserIdentity(emailAddress: $0.email, phoneNumber: $0.phone)) }
            ?? participants.first { $0.userRecordName == user.recordName }
        guard let mine else { return Standing(share: share, participation: nil, principal: .stranger, facts: facts) }
        return Standing(share: share, participation: mine, principal: ZoneAccess.principal(mine, share: share), facts: facts)
    }

    static func find(_ reader: any StoreReading, _ guid: String, scope: RequestScope) throws -> StoredShare {
        guard let share = try reader.share(shortGUID: guid, container: scope.database.container, environment: scope.database.environment) else {
            throw CloudKitError(.notFound, AccessPolicy.hiddenReason)
        }
        return share
    }

    // MARK: records/resolve

    /// Share metadata for each URL token; per-item errors (`NOT_FOUND` for a private share the
    /// caller is not invited to, unless they may verify an invitation or request access).
    public func resolve(_ requests: [ShortGUIDRequest], user: UserAccount, scope: RequestScope) throws -> [Result<Metadata, CloudKitError>] {
        try store.read { reader in
            requests.map { request in
                Result {
                    let share = try Self.find(reader, request.value, scope: scope)
                    let standing = try Self.standing(reader, share, user: user)
                    return try Self.metadata(reader, standing, request: request, user: user, scope: scope)
                }.mapError { $0 as? CloudKitError ?? CloudKitError(.internalError, "\($0)") }
            }
        }
    }

    static func metadata(_ reader: any StoreReading, _ standing: Standing, request: ShortGUIDRequest, user: UserAccount,
                         scope: RequestScope) throws -> Metadata {
        let share = standing.share
        let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
        var metadata = Metadata(shortGUID: share.shortGUID, container: scope.database.container, environment: scope.database.environment,
                                share: nil, zoneID: share.zone.zoneID, rootRecordName: share.rootRecordName, rootRecord: nil,
                                ownerIdentity: try presenter.identity(of: share.owner, showContact: false), participantRole: .unknown,
                                participantStatus: .unknown, participantPermission: .none, databaseScope: "SHARED",
                                potentialMatches: [], allowsAccessRequests: false)
        let decision = AccessPolicy.decide(standing.principal, .resolve, share: standing.facts)
        guard decision.isAllowed else {
            // Someone holding the URL of a private share learns only what lets them get in.
            let unverified = try reader.participants(share: share).filter { $0.userRecordName == nil && $0.status == .pending }
            let mayRequest = AccessPolicy.decide(standing.principal, .requestAccess, share: standing.facts).isAllowed
            guard !unverified.isEmpty || mayRequest else { try decision.enforce(); return metadata }
            metadata.rootRecordName = nil
            metadata.zoneID = nil
            metadata.potentialMatches = unverified.map { ($0.participantID, UserIdentity(emailAddress: $0.email.map(Self.mask),
                                                                                          phoneNumber: $0.phone.map(Self.mask))) }
            metadata.allowsAccessRequests = mayRequest
            return metadata
        }
        var record = try reader.record(zone: share.zone, name: share.recordName)
        record?.sharing = try presenter.present(share, viewer: user.recordName)
        metadata.share = record
        metadata.allowsAccessRequests = share.allowsAccessRequests
        switch standing.principal {
        case .owner:
            (metadata.participantRole, metadata.participantStatus, metadata.participantPermission) = (.owner, .accepted, .readWrite)
            metadata.databaseScope = "PRIVATE"
        case .participant, .invited:
            let mine = standing.participation!
            (metadata.participantRole, metadata.participantStatus) = (mine.role, mine.status)
            metadata.participantPermission = mine.role == .publicUser ? share.publicPermission : mine.permission
        case .removed, .stranger, .anonymous:
            (metadata.participantRole, metadata.participantStatus, metadata.participantPermission) = (.publicUser, .unknown, share.publicPermission)
        }
        if request.shouldFetchRootRecord, let root = share.rootRecordName, var rootRecord = try reader.record(zone: share.zone, name: root) {
            if let keys = request.rootRecordDesiredKeys { rootRecord.fields = rootRecord.fields.filter { keys.contains($0.key) } }
            metadata.rootRecord = rootRecord
        }
        return metadata
    }

    /// `alice@example.com` → `a•••@example.com`; `+15550102000` → `•••2000`.
    static func mask(_ contact: String) -> String {
        if let at = contact.firstIndex(of: "@") { return String(contact.prefix(1)) + "•••" + contact[at...] }
        return "•••" + contact.suffix(4)
    }

    // MARK: records/accept

    /// Accepts each share: an invitation becomes `ACCEPTED`; anyone holding a public share's URL
    /// joins as `PUBLIC_USER` (limit D8); the owner and accepted participants get the metadata
    /// unchanged. A private share the caller is not invited to is `NOT_FOUND`.
    public func accept(_ requests: [ShortGUIDRequest], user: UserAccount, scope: RequestScope) throws -> [Result<Metadata, CloudKitError>] {
        let limit = participantLimit
        let hub = self.hub
        return try requests.map { request in
            do {
                return .success(try store.write({ tx -> (Metadata, ChangeEvent?) in
                    let share = try Self.find(tx, request.value, scope: scope)
                    var standing = try Self.standing(tx, share, user: user)
                    try AccessPolicy.decide(standing.principal, .accept, share: standing.facts).enforce()
                    let now = Clock.milliseconds()
                    switch standing.principal {
                    case .invited:
                        var mine = standing.participation!
                        mine.status = .accepted
                        mine.userRecordName = user.recordName
                        try tx.putParticipant(mine, share: share)
                        try tx.removeRequester(user.recordName, share: share)
                    case .stranger, .removed:
                        let active = try tx.participants(share: share).filter { $0.status != .removed }.count + 1
                        guard active < limit else {
                            throw CloudKitError(.tooManyParticipants, "this share already has \(active) participants, its limit")
                        }
                        let joined = StoredParticipant(participantID: standing.participation?.participantID ?? ShareTokens.makeParticipantID(),
                                                       userRecordName: user.recordName, email: nil, phone: nil, role: .publicUser,
                                                       permission: share.publicPermission, status: .accepted, isApprovedRequester: false, addedAt: now)
                        try tx.putParticipant(joined, share: share)
                    default:
                        break
                    }
                    var event: ChangeEvent?
                    if standing.principal == .invited || standing.principal == .stranger || standing.principal == .removed {
                        event = try ShareRecords.participantsChanged(tx, share: share, by: user.recordName, container: scope.database.container,
                                                                     environment: scope.database.environment, deviceID: scope.deviceID, at: now)
                    }
                    standing = try Self.standing(tx, share, user: user)
                    return (try Self.metadata(tx, standing, request: request, user: user, scope: scope), event)
                }, afterCommit: { if let event = $0.1 { hub?.publish(event) } }).0)
            } catch let error as CloudKitError {
                return .failure(error)
            }
        }
    }
}
