import TandemCore
import TandemStore

/// Share records in `records/modify`: creating hierarchical and zone-wide shares, changing
/// participants and permissions, stopping sharing (owner) and leaving (participant).
///
/// Rules (cloudkit.md §2.1, §2.4; decisions D4–D8): shares live in custom zones of the owner's
/// private database; a new share is saved in the same request as its root; a record is in at
/// most one share and a zone-wide share excludes hierarchical ones (`ALREADY_SHARED`); share
/// saves are always version-checked; participants are added or removed only while
/// `publicPermission` is `NONE`; changing it drops pending participants (to `NONE`: all).
extension ModifyContext {
    func applyToShare(_ op: RecordOperation, existing: Record?) throws -> RecordService.ItemResult {
        batch.sharingChanged = true
        if let existing, op.recordType.map({ $0 != Share.recordType }) ?? false {
            throw CloudKitError.badRequest("record '\(existing.recordName)' is a cloudkit.share; a record's type cannot change")
        }
        guard let existing else { return .saved(try createShare(op)) }
        guard let share = try tx.share(zone: zone, recordName: existing.recordName) else {
            throw CloudKitError(.internalError, "share record '\(existing.recordName)' has no share state")
        }
        if op.kind == .create {
            // As for any record: creating what exists is EXISTS, with the share as the caller sees it.
            let what = share.isZoneWide ? "zone '\(zone.zoneID.zoneName)' already has a zone-wide share" : "share '\(share.recordName)' already exists"
            var error = CloudKitError(.exists, "\(what): '\(share.recordName)'; fetch it and save changes with update and its recordChangeTag")
            var server = existing
            server.sharing = try batch.presenter(tx).present(share, viewer: scope.user)
            error.serverRecord = try readableServerRecord(server)
            throw error
        }
        // Permission first (a reader learns nothing from a version answer), then the version:
        // share saves are always version-checked, whatever the operation type.
        try AccessPolicy.decide(access.principal(for: share), AccessPolicy.action(for: .share, deleting: op.kind.isDelete),
                                share: ZoneAccess.facts(share)).enforce()
        if op.kind != .forceDelete, existing.recordChangeTag != op.recordChangeTag {
            throw try conflict(op, existing)
        }
        if op.kind.isDelete {
            try deleteShare(share, record: existing)
            return .deleted(recordName: op.recordName)
        }
        return .saved(try updateShare(op, share: share, existing: existing))
    }

    private func createShare(_ op: RecordOperation) throws -> Record {
        guard access.isOwner else {
            throw CloudKitError(.accessDenied, "only the zone's owner can share its records")
        }
        guard !zone.zoneID.isDefaultZone else {
            throw CloudKitError.badRequest("records in the default zone cannot be shared; create a custom zone")
        }
        guard op.kind != .update && op.kind != .replace else {
            throw CloudKitError(.notFound, "share '\(op.recordName)' does not exist")
        }
        let isZoneWide = op.recordName == Share.zoneWideRecordName
        var rootName: String?
        if isZoneWide {
            guard op.forRecord == nil else {
                throw CloudKitError.badRequest("a zone-wide share (cloudkit.zoneshare) has no root record; drop forRecord")
            }
            if let other = access.shares.values.first {
                throw CloudKitError(.alreadyShared, "zone '\(zone.zoneID.zoneName)' already has records shared by '\(other.recordName)'; it cannot also get a zone-wide share")
            }
        } else {
            guard let root = op.forRecord else {
                throw CloudKitError.badRequest("a new share needs forRecord naming its root record (or the record name cloudkit.zoneshare for a zone-wide share)")
            }
            guard batch.savedNames.contains(root) else {
                throw CloudKitError.badRequest("save root record '\(root)' in the same request as its new share")
            }
            guard batch.succeededNames.contains(root) else {
                throw CloudKitError.badRequest("root record '\(root)' was not saved (see its own result), so its share was not created")
            }
            if access.zoneShare != nil {
                throw CloudKitError(.alreadyShared, "zone '\(zone.zoneID.zoneName)' is shared as a whole; its records cannot get their own share")
            }
            guard let found = try tx.recordWithMembership(zone: zone, name: root) else {
                throw CloudKitError(.notFound, "root record '\(root)' does not exist")
            }
            if let current = found.membership ?? found.record.share {
                throw CloudKitError(.alreadyShared, "record '\(root)' is already in share '\(current)'; a record can be in only one share")
            }
            let subtree = try tx.subtree(zone: zone, of: root)
            if let nested = subtree.shareRoots.first(where: { $0 != root }) {
                throw CloudKitError(.alreadyShared, "record '\(nested)' below '\(root)' is the root of its own share; a record can be in only one share")
            }
            rootName = root
        }
        let tokenKey = rootName ?? ""
        let guid: String
        if let minted = try tx.shortGUID(zone: zone, rootName: tokenKey) {
            guid = minted  // the same root shared again keeps its URL
        } else {
            guid = ShareTokens.makeShortGUID()
            try tx.mintShortGUID(zone: zone, rootName: tokenKey, guid: guid)
        }
        var share = try tx.putShare(StoredShare(key: 0, zone: zone, recordName: op.recordName, rootRecordName: rootName, shortGUID: guid,
                                                publicPermission: .none, allowsAccessRequests: false, createdAt: now))
        try applyParticipantChanges(&share, changes: op.shareChanges, principal: .owner, current: [])
        share = try tx.putShare(share)
        try SharingOptionsPolicy.checkSave(tx, share: share, before: nil, participantsBefore: [],
                                           requested: op.shareChanges.allowedSharingOptions, container: scope.database.container)
        var shareOp = op
        shareOp.parent = nil
        shareOp.clearsParent = true
        let record = try save(shareOp, over: nil, membership: nil, rule: .fixed(isZoneWide ? nil : op.recordName))
        if let rootName { try relinkRoot(rootName, to: op.recordName) }
        return record
    }

    private func updateShare(_ op: RecordOperation, share: StoredShare, existing: Record) throws -> Record {
        var share = share
        let principal = access.principal(for: share)
        let facts = ZoneAccess.facts(share)
        if let permission = op.shareChanges.publicPermission, permission != share.publicPermission {
            try AccessPolicy.decide(principal, .changePublicPermission, share: facts).enforce()
        }
        try AccessPolicy.decide(principal, .manageParticipants, share: facts).enforce()
        let before = share
        let current = try tx.participants(share: share)
        try noteReach(share)
        try applyParticipantChanges(&share, changes: op.shareChanges, principal: principal, current: current)
        _ = try tx.putShare(share)
        try SharingOptionsPolicy.checkSave(tx, share: share, before: before, participantsBefore: current,
                                           requested: op.shareChanges.allowedSharingOptions, container: scope.database.container)
        var shareOp = op
        shareOp.parent = nil
        shareOp.clearsParent = true
        let saved = try save(shareOp, over: existing, membership: nil, rule: .fixed(share.isZoneWide ? nil : share.recordName))
        if let renamed = ShareMetadataRefresh.Change(share: share, before: existing, after: saved) { batch.metadataChanges.append(renamed) }
        return saved
    }

    /// The owner deleting a share stops sharing for everyone; a participant deleting it leaves (D5).
    private func deleteShare(_ share: StoredShare, record: Record) throws {
        let principal = access.principal(for: share)
        try AccessPolicy.decide(principal, .deleteShare, share: ZoneAccess.facts(share)).enforce()
        if principal == .owner {
            try stopSharing(share)
            let sequence = try tx.nextChangeSequence(zone)
            try tx.deleteRecord(name: record.recordName, recordType: record.recordType, zone: zone, sequence: sequence)
            return
        }
        guard var mine = access.participations[share.key] else { return }
        try noteReach(share)
        mine.status = .removed
        try tx.putParticipant(mine, share: share)
        try ShareRecords.touch(tx, share: share, by: scope.user, at: now)
    }

    /// Notes whose highlight lists show the share before its people change, and the share, so
    /// that those it reaches afterwards are added at the end of the request (W19).
    private func noteReach(_ share: StoredShare) throws {
        guard batch.reshapedShares.insert(share.shortGUID).inserted else { return }
        batch.shareHighlightViewers.formUnion(try ShareReach.viewers(tx, shortGUID: share.shortGUID, container: scope.database.container,
                                                                     environment: scope.database.environment))
    }

    /// Ends a share: participants lose access at once, records leave it, the root forgets it.
    /// The URL token stays reserved for the root.
    func stopSharing(_ share: StoredShare) throws {
        batch.sharingChanged = true
        // Whoever had its collaboration highlight gets a fresh list without it (W17), read
        // before the share goes, while its people still tell which conversations it reached.
        let id = Collaborations.identifier(shortGUID: share.shortGUID)
        if let collaboration = try tx.collaboration(id: id, container: scope.database.container, environment: scope.database.environment) {
            for conversation in try NoticeService.conversations(tx, sharing: collaboration) { batch.shareHighlightViewers.formUnion(conversation.members) }
        }
        try tx.deleteShare(share)
        if let root = share.rootRecordName, let found = try tx.recordWithMembership(zone: zone, name: root), found.record.share == share.recordName {
            var record = found.record
            record.share = nil
            try ShareRecords.rewrite(tx, record, zone: zone, membership: nil, by: scope.user, at: now)
            batch.rewritten.insert(root)
        }
    }

    /// Points the root at its new share and puts the root's subtree in it.
    private func relinkRoot(_ root: String, to shareName: String) throws {
        guard var record = try tx.recordWithMembership(zone: zone, name: root)?.record else { return }
        record.share = shareName
        try ShareRecords.rewrite(tx, record, zone: zone, membership: shareName, by: scope.user, at: now)
        try tx.setMembership(zone: zone, subtreeOf: root, to: shareName)
        batch.rewritten.insert(root)
    }

    /// Applies a request's share keys to `share` and its participants.
    private func applyParticipantChanges(_ share: inout StoredShare, changes: ShareCodec.Changes, principal: AccessPolicy.Principal,
                                         current: [StoredParticipant]) throws {
        var active = current.filter { $0.status != .removed }
        var dropped: [StoredParticipant] = []
        let newPublic = changes.publicPermission ?? share.publicPermission
        if newPublic != share.publicPermission {
            dropped = newPublic == .none ? active : active.filter { $0.status == .pending }
            for var participant in dropped {
                participant.status = .removed
                try tx.putParticipant(participant, share: share)
                if let user = participant.userRecordName { batch.participantChanges.append(.init(share: share, user: user, added: false)) }
            }
            active.removeAll { candidate in dropped.contains { $0.participantID == candidate.participantID } }
            share.publicPermission = newPublic
        }
        if let allows = changes.allowsAccessRequests { share.allowsAccessRequests = allows }
        guard let requested = changes.participants else { return }
        var kept = Set<String>()
        // Declined invitations (A44): listed by participantId (a share sent back as fetched) they
        // stay as they are; added again by lookupInfo they are invited again; left out they are
        // dropped from the list.
        let declined = current.filter(\.isDeclined)
        var stillDeclined = Set<String>(), reinvited = Set<String>()
        let owner = try tx.user(matching: UserIdentity(userRecordName: share.owner))?.identity ?? UserIdentity(userRecordName: share.owner)
        for request in requested {
            // The owner may appear in the list (a share sent back as fetched); nobody else is OWNER.
            let isOwner = request.participantID == ShareTokens.ownerParticipantID(share)
                || (request.lookup != UserIdentity() && request.lookup.isSamePerson(as: owner))
            if isOwner { continue }
            if request.role == .owner {
                throw CloudKitError.badRequest("only the zone's owner is OWNER; send other participants as USER or ADMINISTRATOR")
            }
            if let match = active.first(where: { Self.matches(request, $0) }) {
                guard kept.insert(match.participantID).inserted else {
                    // Invited again by lookupInfo, and also sent back as fetched: one person.
                    if reinvited.contains(match.participantID) && request.participantID == match.participantID { continue }
                    throw CloudKitError.badRequest("participant '\(match.userRecordName ?? match.email ?? match.phone ?? match.participantID)' appears twice in participants")
                }
                var updated = match
                if let permission = request.permission { updated.permission = permission }
                if updated.permission != match.permission && principal != .owner && match.userRecordName == access.user {
                    throw CloudKitError(.accessDenied, "administrators cannot change their own permission")
                }
                if let role = request.role, role != match.role {
                    guard principal == .owner else {
                        throw CloudKitError(.accessDenied, "only the owner may change a participant's role")
                    }
                    guard role == .administrator || role == .privateUser, match.role != .publicUser else {
                        throw CloudKitError.badRequest("a participant's type can change between USER and ADMINISTRATOR only")
                    }
                    updated.role = role
                }
                if updated != match { try tx.putParticipant(updated, share: share) }
                continue
            }
            if dropped.contains(where: { Self.matches(request, $0) }) { continue }
            if let id = request.participantID, declined.contains(where: { $0.participantID == id }) {
                stillDeclined.insert(id)
                continue
            }
            let participant = try newParticipant(request, share: share, principal: principal, publicPermission: newPublic, current: current)
            guard participant.userRecordName != share.owner else { continue }
            if declined.contains(where: { $0.participantID == participant.participantID }) { reinvited.insert(participant.participantID) }
            try tx.putParticipant(participant, share: share)
            // The owner's invitation lifts a block on the person (W23).
            if let user = participant.userRecordName { try tx.setBlocked(user, blocked: false, share: share, at: now) }
            if let user = participant.userRecordName { batch.participantChanges.append(.init(share: share, user: user, added: true)) }
            batch.invitations.append(.init(share: share, participant: participant))
            active.append(participant)
            kept.insert(participant.participantID)
        }
        for var participant in declined where !stillDeclined.contains(participant.participantID) && !reinvited.contains(participant.participantID) {
            participant.declinedAt = nil
            try tx.putParticipant(participant, share: share)
        }
        let removing = active.filter { !kept.contains($0.participantID) }
        if !removing.isEmpty && newPublic != .none {
            throw CloudKitError.badRequest("participants can only be removed while publicPermission is NONE (send the complete participants list)")
        }
        for var participant in removing {
            participant.status = .removed
            try tx.putParticipant(participant, share: share)
            if let user = participant.userRecordName { batch.participantChanges.append(.init(share: share, user: user, added: false)) }
        }
        let count = active.count - removing.count + 1
        guard count <= batch.participantLimit else {
            throw CloudKitError(.tooManyParticipants, "a share may have at most \(batch.participantLimit) participants, the owner included; this save would make \(count)")
        }
    }

    private func newParticipant(_ request: ShareCodec.ParticipantRequest, share: StoredShare, principal: AccessPolicy.Principal,
                                publicPermission: Share.Permission, current: [StoredParticipant]) throws -> StoredParticipant {
        guard publicPermission == .none else {
            throw CloudKitError.badRequest("participants can only be added while publicPermission is NONE; public users join by accepting the share URL")
        }
        guard request.role != .publicUser else {
            throw CloudKitError.badRequest("PUBLIC_USER participants cannot be added; they join a public share by accepting it")
        }
        if request.role == .administrator && principal != .owner {
            throw CloudKitError(.accessDenied, "only the owner may add administrators")
        }
        if request.participantID != nil && request.lookup == UserIdentity() {
            throw CloudKitError.badRequest("participant '\(request.participantID!)' is not on this share; add people by lookupInfo")
        }
        let account = try tx.user(matching: request.lookup)
        if request.lookup.userRecordName != nil && account == nil {
            throw CloudKitError(.notFound, "no user with userRecordName '\(request.lookup.userRecordName!)'")
        }
        let previous = current.first { $0.status == .removed && Self.matches(request, $0) }
        return StoredParticipant(participantID: previous == nil ? ShareTokens.makeParticipantID() : previous!.participantID,
                                 userRecordName: account?.recordName, email: request.lookup.emailAddress ?? account?.email,
                                 phone: request.lookup.phoneNumber ?? account?.phoneNumber, role: request.role ?? .privateUser,
                                 permission: request.permission ?? .readOnly, status: .pending, isApprovedRequester: false, addedAt: now)
    }

    /// Participant identity: the same participant ID, user record name, email or phone.
    static func matches(_ request: ShareCodec.ParticipantRequest, _ participant: StoredParticipant) -> Bool {
        if let id = request.participantID, id == participant.participantID { return true }
        let stored = UserIdentity(userRecordName: participant.userRecordName, emailAddress: participant.email, phoneNumber: participant.phone)
        return request.lookup != UserIdentity() && request.lookup.isSamePerson(as: stored)
    }
}

/// Writes of share-related records outside an operation of their own.
enum ShareRecords {
    /// Saves `record` again with a new change tag (its `share` link or membership changed).
    static func rewrite(_ tx: any StoreWriting, _ record: Record, zone: StoredZone, membership: String?, by user: String, at now: Int64) throws {
        var record = record
        let sequence = try tx.nextChangeSequence(zone)
        record.recordChangeTag = ChangeTags.tag(zone: zone.key, sequence: sequence)
        record.modified = Record.Stamp(timestamp: now, userRecordName: user)
        try tx.putRecord(record, zone: zone, sequence: sequence, membership: membership)
    }

    /// Gives the share record a new change tag after its participants changed outside
    /// `records/modify` (accept, leave, access requests), so stale copies cannot overwrite them
    /// and change feeds carry the share again.
    static func touch(_ tx: any StoreWriting, share: StoredShare, by user: String, at now: Int64) throws {
        guard let found = try tx.recordWithMembership(zone: share.zone, name: share.recordName) else { return }
        try rewrite(tx, found.record, zone: share.zone, membership: found.membership, by: user, at: now)
    }

    /// After participants changed outside `records/modify`: touches the share record, updates
    /// the database feeds (viewers who lost access get `ACCESS_LOST`), and returns the change
    /// for the hub to publish after commit, so subscribers (and the people who lost access)
    /// hear of it as they would of an owner's save.
    static func participantsChanged(_ tx: any StoreWriting, share: StoredShare, by user: String, container: String,
                                    environment: Environment, deviceID: String = "", at now: Int64) throws -> ChangeEvent {
        // Only this call's changes: a prompt answered for several shares publishes one event each.
        let mark = tx.loggedChanges().count
        try touch(tx, share: share, by: user, at: now)
        let lost = try tx.zoneActivity(share.zone, container: container, environment: environment, viewersChanged: true, at: now)
        return ChangeEvent(logged: tx, zone: share.zone, container: container, environment: environment, deviceID: deviceID,
                           formerViewers: lost, since: mark)
    }
}
