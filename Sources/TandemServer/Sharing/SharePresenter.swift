import TandemCore
import TandemStore

/// Builds the `Share` a viewer sees for a stored share: the owner first, then participants
/// (pending ones and contact details only for the owner and administrators), the viewer's own
/// participant, and for owners and administrators the access requesters and block list.
struct SharePresenter {
    let reader: any StoreReading
    /// The server's base URL; the share URL is `{base}/share/{shortGUID}`.
    let baseURL: String
    /// Signs the `avatarURL`s of the owner and accepted participants for a viewer who is one of
    /// them (decisions R32); nil gives none.
    var signer: AssetURLSigner? = nil

    func present(_ share: StoredShare, viewer: String) throws -> Share {
        let stored = try reader.participants(share: share)
        let isOwner = viewer == share.owner
        let mine = stored.first { $0.userRecordName == viewer && $0.status != .removed }
        let manages = isOwner || (mine?.role == .administrator && mine?.status == .accepted)
        var people: [Share.Participant] = [try ownerParticipant(share, showContact: manages)]
        // The owner and accepted participants see each other's pictures (R32): the people
        // `sharesConversationOrShare` relates, so every URL given here also downloads.
        let seesFaces = isOwner || mine?.status == .accepted
        // A declined invitation stays in the list, REMOVED, for those who manage the share (A44):
        // CloudKit's answer to an invitation is an acceptance status.
        for participant in stored where participant.status != .removed || (manages && participant.isDeclined) {
            let isSelf = participant.userRecordName == viewer
            guard manages || isSelf || participant.status == .accepted else { continue }
            var person = try present(participant, showContact: manages || isSelf)
            if seesFaces && participant.status == .accepted, let name = participant.userRecordName {
                person.identity.avatarURL = try avatarURL(of: name, viewer: viewer)
            }
            people.append(person)
        }
        if seesFaces { people[0].identity.avatarURL = try avatarURL(of: share.owner, viewer: viewer) }
        var result = Share(shortGUID: share.shortGUID, url: Self.url(base: baseURL, shortGUID: share.shortGUID),
                           rootRecordName: share.rootRecordName, publicPermission: share.publicPermission, participants: people,
                           allowsAccessRequests: share.allowsAccessRequests)
        result.allowedSharingOptions = try reader.allowedSharingOptions(share: share)
        result.currentUserParticipant = isOwner ? people[0] : people.first { $0.identity.userRecordName == viewer }
        if manages {
            result.requesters = try reader.requesters(share: share).map { try identity(of: $0, showContact: true) }
            result.blockedIdentities = try reader.blockedUsers(share: share).map { try identity(of: $0, showContact: true) }
        }
        return result
    }

    static func url(base: String, shortGUID: String) -> String { base + "/share/" + shortGUID }

    func ownerParticipant(_ share: StoredShare, showContact: Bool) throws -> Share.Participant {
        Share.Participant(participantID: ShareTokens.ownerParticipantID(share), identity: try identity(of: share.owner, showContact: showContact),
                          role: .owner, permission: .readWrite, acceptanceStatus: .accepted, dateAddedToShare: share.createdAt)
    }

    func present(_ participant: StoredParticipant, showContact: Bool) throws -> Share.Participant {
        var identity: UserIdentity
        if let name = participant.userRecordName {
            identity = try self.identity(of: name, showContact: showContact)
        } else {
            // An invitee without an account: only how they were invited.
            identity = UserIdentity(emailAddress: participant.email, phoneNumber: participant.phone)
        }
        if !showContact && participant.userRecordName != nil {
            identity.emailAddress = nil
            identity.phoneNumber = nil
        }
        return Share.Participant(participantID: participant.participantID, identity: identity, role: participant.role,
                                 permission: participant.permission, acceptanceStatus: participant.status,
                                 isApprovedRequester: participant.isApprovedRequester, dateAddedToShare: participant.addedAt)
    }

    func identity(of userRecordName: String, showContact: Bool) throws -> UserIdentity {
        guard let account = try reader.user(matching: UserIdentity(userRecordName: userRecordName)) else {
            return UserIdentity(userRecordName: userRecordName)
        }
        var identity = account.identity
        if !showContact {
            identity.emailAddress = nil
            identity.phoneNumber = nil
        }
        return identity
    }

    private func avatarURL(of person: String, viewer: String) throws -> String? {
        guard let signer, let account = try reader.user(matching: UserIdentity(userRecordName: person)) else { return nil }
        return AvatarRoutes.url(of: account, reader: viewer, base: baseURL, signer: signer)
    }

    /// Fills `sharing` on every share record among `records`.
    func decorate(_ records: inout [Record], access: ZoneAccess) throws {
        for index in records.indices where records[index].recordType == Share.recordType {
            if let share = access.shares[records[index].recordName] {
                records[index].sharing = try present(share, viewer: access.user)
            }
        }
    }
}
