public import TandemCore
public import TandemStore

/// Access requests (Tandem decisions D7; CloudKit iOS 26 `CKShare.requesters`,
/// `blockedIdentities`, `CKShareRequestAccessOperation`).
extension ShareService {
    /// What an owner or administrator does with requesters.
    public enum RequestAction: String, Sendable, CaseIterable {
        case approve = "approveRequesters"
        case deny = "denyRequesters"
        case block = "blockRequesters"
        case unblock = "unblockIdentities"
    }

    /// Asks to join each share. Allowed for people outside a share that allows requests and has
    /// not blocked them; anyone else gets the same `NOT_FOUND` as for a share that does not
    /// exist. An invitee gets `PARTICIPANT_ALREADY_INVITED`. Asking twice is one request.
    public func requestAccess(_ guids: [String], user: UserAccount, scope: RequestScope) throws -> [Result<String, CloudKitError>] {
        try guids.map { guid in
            do {
                let hub = self.hub
                try store.write({ tx -> ChangeEvent in
                    let share = try Self.find(tx, guid, scope: scope)
                    let standing = try Self.standing(tx, share, user: user)
                    try AccessPolicy.decide(standing.principal, .requestAccess, share: standing.facts).enforce()
                    let now = Clock.milliseconds()
                    try tx.addRequester(user.recordName, share: share, at: now)
                    // The owner's copy of the share record now lists the requester.
                    return try ShareRecords.participantsChanged(tx, share: share, by: user.recordName, container: scope.database.container,
                                                                environment: scope.database.environment, deviceID: scope.deviceID, at: now)
                }, afterCommit: { hub?.publish($0) })
                return .success(guid)
            } catch let error as CloudKitError {
                return .failure(error)
            }
        }
    }

    /// Approves, denies, blocks or unblocks `users` on the share at `guid`; returns the share
    /// record as the caller now sees it.
    ///
    /// - approve: each must be a pending requester; they become `INVITED` participants with
    ///   `permission` (default `READ_ONLY`) and `isApprovedRequester`, and accept as usual.
    ///   Needs `publicPermission` `NONE` and room under the participant limit.
    /// - deny: drops their requests (they may ask again).
    /// - block: drops their requests, bars new ones and removes them if they are participants.
    /// - unblock: lets them ask again.
    ///
    /// Denying someone who is not asking, blocking someone already blocked (and neither asking
    /// nor a participant) and unblocking someone not blocked change nothing; when nothing
    /// changes, the share record keeps its version (W23).
    /// - Throws: per the policy (`NOT_FOUND` outside the share, `ACCESS_DENIED` for participants
    ///   who are not administrators); `BAD_REQUEST` for an empty `users`, approving someone who
    ///   did not ask, or with a permission outside the share's allowed sharing options (R17).
    public func manageRequesters(_ action: RequestAction, guid: String, users: [String], permission: Share.Permission,
                                 caller: UserAccount, scope: RequestScope) throws -> Record {
        let limit = participantLimit
        let hub = self.hub, conversationHub = self.conversationHub
        let (container, environment) = (scope.database.container, scope.database.environment)
        return try store.write({ tx -> (Record, ChangeEvent?, Set<String>) in
            let share = try Self.find(tx, guid, scope: scope)
            let standing = try Self.standing(tx, share, user: caller)
            try AccessPolicy.decide(standing.principal, .manageRequests, share: standing.facts).enforce()
            guard !users.isEmpty else { throw CloudKitError.badRequest("\(action.rawValue) needs at least one user record name") }
            let now = Clock.milliseconds()
            // Approving or blocking changes the share's people, so which conversations it
            // reaches: those it reached and those it reaches now get fresh lists (W19).
            var viewers = try ShareReach.viewers(tx, shortGUID: share.shortGUID, container: container, environment: environment)
            let requesters = Set(try tx.requesters(share: share))
            let blocked = Set(try tx.blockedUsers(share: share))
            var participants = try tx.participants(share: share)
            var changed = false
            for user in users {
                switch action {
                case .approve:
                    guard requesters.contains(user) else {
                        throw CloudKitError.badRequest("'\(user)' has not requested access to this share")
                    }
                    changed = true
                    // Someone who became a participant meanwhile keeps their place; the request just goes.
                    if participants.contains(where: { $0.userRecordName == user && $0.status != .removed }) {
                        try tx.removeRequester(user, share: share)
                        continue
                    }
                    guard share.publicPermission == .none else {
                        throw CloudKitError.badRequest("participants can only be added while publicPermission is NONE")
                    }
                    try SharingOptionsPolicy.checkGrant(tx, share: share, container: scope.database.container, permission: permission,
                                                        who: "approved requester '\(user)'")
                    let active = participants.filter { $0.status != .removed }.count + 1
                    guard active < limit else {
                        throw CloudKitError(.tooManyParticipants, "this share already has \(active) participants, its limit")
                    }
                    let account = try tx.user(matching: UserIdentity(userRecordName: user))
                    let previous = participants.first { $0.userRecordName == user }
                    let added = StoredParticipant(participantID: previous?.participantID ?? ShareTokens.makeParticipantID(), userRecordName: user,
                                                  email: account?.email, phone: account?.phoneNumber, role: .privateUser, permission: permission,
                                                  status: .pending, isApprovedRequester: true, addedAt: now)
                    try tx.putParticipant(added, share: share)
                    participants.removeAll { $0.participantID == added.participantID }
                    participants.append(added)
                    try tx.removeRequester(user, share: share)
                case .deny:
                    guard requesters.contains(user) else { continue }
                    changed = true
                    try tx.removeRequester(user, share: share)
                case .block:
                    guard user != share.owner else { throw CloudKitError.badRequest("the owner cannot be blocked") }
                    let participating = participants.contains { $0.userRecordName == user && $0.status != .removed }
                    guard requesters.contains(user) || !blocked.contains(user) || participating else { continue }
                    changed = true
                    try tx.removeRequester(user, share: share)
                    try tx.setBlocked(user, blocked: true, share: share, at: now)
                    for var participant in participants where participant.userRecordName == user && participant.status != .removed {
                        participant.status = .removed
                        try tx.putParticipant(participant, share: share)
                    }
                case .unblock:
                    guard blocked.contains(user) else { continue }
                    changed = true
                    try tx.setBlocked(user, blocked: false, share: share, at: now)
                }
            }
            // Nothing changed: the share record keeps its version and nobody is told (W23).
            let event = changed ? try ShareRecords.participantsChanged(tx, share: share, by: caller.recordName, container: scope.database.container,
                                                                       environment: scope.database.environment, deviceID: scope.deviceID, at: now) : nil
            guard var record = try tx.record(zone: share.zone, name: share.recordName) else {
                throw CloudKitError(.notFound, "the share record is gone")
            }
            record.sharing = try SharePresenter(reader: tx, baseURL: scope.baseURL, signer: scope.avatarSigner).present(share, viewer: caller.recordName)
            viewers.formUnion(try ShareReach.viewers(tx, shortGUID: share.shortGUID, container: container, environment: environment))
            return (record, event, viewers)
        }, afterCommit: { outcome in
            if let event = outcome.1 { hub?.publish(event) }
            conversationHub?.publish(ShareReach.effects(outcome.2, container: container, environment: environment))
        }).0
    }
}
