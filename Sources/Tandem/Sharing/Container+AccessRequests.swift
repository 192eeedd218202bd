internal import TandemCore

/// Answering access requests: approve, deny, block, unblock (CloudKit iOS 26's
/// `CKShare.requesters`, `denyRequesters(_:)`, `blockRequesters(_:)`, `unblockIdentities(_:)`).
///
/// ```swift
/// let share = Share(try await container.privateDatabase.record(for: shareID))!
/// for requester in share.requesters { print(requester.userIdentity.nameComponents as Any) }
/// let updated = try await container.approveRequesters(share.requesters, of: share, permission: .readWrite)
/// // the requesters are now INVITED participants; they accept the share URL as any invitee
/// ```
///
/// CloudKit changes the `CKShare` in memory and persists it with the next share save; Tandem's
/// server keeps requests apart from the share record's keys (decisions D7, T23), so each call is
/// one request to `/tandem/1/{container}/{environment}/shares/{action}` with the share's
/// `shortGUID` and the people's user record names, answered with the share as the caller now
/// sees it (decisions R7). Every call gives the share record a new change tag (T11): use the
/// share returned, not the one passed in, for the next save.
///
/// Errors, for every call: `invalidArguments` for a share never saved, an identity without a
/// user record ID, an empty list, or (approve) someone who has not asked; `unknownItem` when the
/// share does not exist or the caller is not on it; `permissionFailure` for participants who
/// are not the owner or an administrator; `notAuthenticated`.
extension Container {
    /// Lets requesters in (`CKShare.requesters` → add participant, decisions T10): each becomes an
    /// `INVITED` participant with `permission` (`.readOnly` or `.readWrite`) and
    /// `isApprovedRequester`, and joins by accepting the share URL. Someone who became a
    /// participant meanwhile keeps their place. Needs the share's `publicPermission` `.none`
    /// (`invalidArguments` otherwise) and room under the participant limit (`tooManyParticipants`).
    @discardableResult
    public func approveRequesters(_ requesters: [Share.AccessRequester], of share: Share,
                                  permission: Share.ParticipantPermission = .readOnly) async throws(TandemError) -> Share {
        guard permission == .readOnly || permission == .readWrite else {
            throw TandemError(.invalidArguments, "an approved requester's permission is readOnly or readWrite")
        }
        return try await manageRequesters("approveRequesters", requesters.map(\.userIdentity), of: share, permission: permission)
    }

    /// Drops requests (`CKShare.denyRequesters(_:)`); the people may ask again.
    @discardableResult
    public func denyRequesters(_ requesters: [Share.AccessRequester], of share: Share) async throws(TandemError) -> Share {
        try await manageRequesters("denyRequesters", requesters.map(\.userIdentity), of: share, permission: nil)
    }

    /// Bars people from the share (`CKShare.blockRequesters(_:)`): their requests go, later
    /// requests are refused as if the share did not exist (T9), and a participant among them is
    /// removed. Takes any identity with a user record ID (a participant, or someone who joined a
    /// public share), not only requesters; the owner cannot be blocked (`invalidArguments`).
    @discardableResult
    public func blockRequesters(_ identities: [UserIdentity], of share: Share) async throws(TandemError) -> Share {
        try await manageRequesters("blockRequesters", identities, of: share, permission: nil)
    }

    /// `blockRequesters(_:of:)` for requesters of `Share.requesters`.
    @discardableResult
    public func blockRequesters(_ requesters: [Share.AccessRequester], of share: Share) async throws(TandemError) -> Share {
        try await blockRequesters(requesters.map(\.userIdentity), of: share)
    }

    /// Lets blocked people ask again (`CKShare.unblockIdentities(_:)`); it does not let them in.
    @discardableResult
    public func unblockIdentities(_ identities: [Share.BlockedIdentity], of share: Share) async throws(TandemError) -> Share {
        try await manageRequesters("unblockIdentities", identities.map(\.userIdentity), of: share, permission: nil)
    }

    private func manageRequesters(_ action: String, _ identities: [UserIdentity], of share: Share,
                                  permission: Share.ParticipantPermission?) async throws(TandemError) -> Share {
        guard let guid = share.shortGUID else {
            throw TandemError(.invalidArguments, "the share has not been saved yet (it has no URL)")
        }
        guard !identities.isEmpty else { throw TandemError(.invalidArguments, "\(action) needs at least one person") }
        var names: [JSONValue] = []
        for identity in identities {
            guard let name = identity.userRecordID?.recordName else {
                throw TandemError(.invalidArguments, "\(action) needs people with accounts (a userRecordID)")
            }
            names.append(.string(name))
        }
        var body: JSONObject = ["shortGUID": .string(guid), "userRecordNames": .array(names)]
        if let permission { body["permission"] = .string(permission.rawValue) }
        let json = try await transport.json(transport.tandemURL("shares/\(action)"), body: .object(body))
        // The owner's zones are private; an administrator manages a share in their shared database.
        let scope: Database.Scope = share.recordID.zoneID.ownerName == RecordZone.ID.currentUserOwnerName ? .private : .shared
        guard let item = json["share"], let updated = Share(try Record(json: item, scope: scope)) else {
            throw TandemError(.internalError, "shares/\(action) answered without the share")
        }
        return updated
    }
}
