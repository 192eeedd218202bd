public import TandemCore
public import TandemStore

/// Pending invitations: the shares a person was invited to and has not accepted, and declining
/// them (issue 16 item 5; decisions A33). Accepting is `records/accept`.
extension ShareService {
    /// A share the caller is `INVITED` to, as `shares/invitations` lists it.
    public struct Invitation: Sendable {
        public var shortGUID: String
        /// `{base}/share/{shortGUID}`: the landing page, the same URL the invitation email holds.
        public var url: String
        /// The share record's `cloudkit.title`, else "Shared item".
        public var title: String
        /// The owner's user record name and names; contact details are not shown.
        public var ownerIdentity: UserIdentity
        public var role: Share.Role
        public var permission: Share.Permission
        public var zoneID: ZoneID
        /// The root record of a hierarchical share and its type; nil for a zone-wide share.
        public var rootRecordName: String?
        public var rootRecordType: String?
        /// Milliseconds since 1970.
        public var invitedAt: Int64
    }

    /// The caller's pending invitations in the scope's container and environment, oldest first.
    public func invitations(user: UserAccount, scope: RequestScope) throws -> [Invitation] {
        try store.read { reader in
            let presenter = SharePresenter(reader: reader, baseURL: scope.baseURL, signer: scope.avatarSigner)
            return try reader.participations(user: user.recordName)
                .filter { $0.participant.status == .pending && $0.container == scope.database.container && $0.environment == scope.database.environment }
                .sorted { $0.participant.addedAt < $1.participant.addedAt }
                .map { item in
                    let share = item.share
                    let root = try share.rootRecordName.flatMap { try reader.record(zone: share.zone, name: $0) }
                    return Invitation(shortGUID: share.shortGUID, url: SharePresenter.url(base: scope.baseURL, shortGUID: share.shortGUID),
                                      title: try ShareInvitations.title(reader, share),
                                      ownerIdentity: try presenter.identity(of: share.owner, showContact: false),
                                      role: item.participant.role, permission: item.participant.permission, zoneID: share.zone.zoneID,
                                      rootRecordName: share.rootRecordName, rootRecordType: root?.recordType, invitedAt: item.participant.addedAt)
                }
        }
    }

    /// Declines each invitation: the caller's participation becomes `REMOVED` as leaving does
    /// (the share record is touched so the owner's feeds and subscriptions hear of it), marked
    /// declined, so the share's owner and administrators see the person `REMOVED` (A44). Only
    /// for an invitation not yet accepted.
    /// - Returns: per item, the short GUID, or `NOT_FOUND` (no share, or not invited: the same
    ///   answer), `BAD_REQUEST` for the owner and for a participant who already accepted.
    public func declineInvitations(_ guids: [String], user: UserAccount, scope: RequestScope) throws -> [Result<String, CloudKitError>] {
        let hub = self.hub, conversationHub = self.conversationHub
        let (container, environment) = (scope.database.container, scope.database.environment)
        return try guids.map { guid in
            do {
                try store.write({ tx -> (ChangeEvent, Set<String>) in
                    let share = try Self.find(tx, guid, scope: scope)
                    let standing = try Self.standing(tx, share, user: user)
                    try AccessPolicy.decide(standing.principal, .declineInvitation, share: standing.facts).enforce()
                    guard var mine = standing.participation else { throw CloudKitError(.notFound, AccessPolicy.hiddenReason) }
                    // Their sends of its URL stop counting: those it reached get fresh lists (W19).
                    let viewers = try ShareReach.viewers(tx, shortGUID: share.shortGUID, container: container, environment: environment)
                    mine.status = .removed
                    mine.userRecordName = user.recordName
                    // Remembered, so the owner sees the answer: REMOVED in the share's participants (A44).
                    mine.declinedAt = Clock.milliseconds()
                    try tx.putParticipant(mine, share: share)
                    return (try ShareRecords.participantsChanged(tx, share: share, by: user.recordName, container: container,
                                                                 environment: environment, deviceID: scope.deviceID,
                                                                 at: Clock.milliseconds()), viewers)
                }, afterCommit: { outcome in
                    hub?.publish(outcome.0)
                    conversationHub?.publish(ShareReach.effects(outcome.1, container: container, environment: environment))
                })
                return .success(guid)
            } catch let error as CloudKitError {
                return .failure(error)
            }
        }
    }
}
