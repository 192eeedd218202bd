import Foundation
internal import TandemCore
internal import TandemSQLite

/// Sharing through the local store (`NSPersistentCloudKitContainer`'s sharing API).
extension LocalStore {
    /// The zone name prefix of zones made by `share(_:to:)` (Core Data uses
    /// `com.apple.coredata.cloudkit.share.UUID`).
    public static let shareZonePrefix = "tandem.share."

    /// Shares records and the records related to them (`NSPersistentCloudKitContainer.share(_:to:)`,
    /// which moves "the objects and their related objects" into the share's zone).
    ///
    /// - `to: nil`: makes a new private zone `tandem.share.<UUID>` and a zone-wide share
    ///   (`cloudkit.zoneshare`) for it, and moves the records there, as Core Data does: the
    ///   records (with their local edits) and the share are saved in ONE atomic `records/modify`
    ///   of the new zone, then the originals are deleted (locally now, on the server through the
    ///   private engine). A record never sent is simply created in the new zone.
    /// - `to: share`: moves the records into that share's zone (a zone-wide share the user owns).
    ///   Records already in that zone stay as they are.
    ///
    /// What moves (R34): the listed records, then, level by level up to `depth`, every record the
    /// file holds that one of them references (a `REFERENCE` or `REFERENCE_LIST` field, or its
    /// `parent`) or that references one of them: a relation and its inverse, as in Core Data.
    /// `depth: 0` moves only the listed records; `nil` (the default) everything reachable. Each
    /// record moves once, so cycles end. References among the moved records are rewritten to
    /// name the moved records (R35); one to a record that stays keeps its name in the new zone
    /// (it resolves if that record is shared there later), and a `parent` that stays is dropped.
    ///
    /// Record names stay; zone IDs change: use the returned records from now on.
    /// Needs the network (the server makes the share's URL). Reads every record of the zones
    /// involved once (to find the records that reference the moving ones).
    /// - Parameter depth: levels of relations followed (0 or more; nil: all).
    /// - Returns: the records as saved in the share's zone (listed first, then by level, a parent
    ///   before its children), and the saved share (with `url`).
    /// - Throws (nothing moved, locally or on the server, R36):
    ///   `invalidArguments` for shared-database records, share records, a share that is not a
    ///   zone-wide share of the user's, a negative depth, a reference naming another zone, or
    ///   two records with one name meeting in the share's zone; `unknownItem` for a listed record
    ///   the store does not hold; `alreadyShared` for a record another share covers;
    ///   `referenceViolation` when a record that stays holds a `VALIDATE` or `DELETE_SELF`
    ///   reference to one that moves (pass a larger depth); `limitExceeded` above 199 records;
    ///   the server's error when the save fails (a zone made for it is deleted again).
    @discardableResult
    public func share(_ records: [Record.ID], to share: Share?, depth: Int? = nil) async throws(TandemError) -> (records: [Record], share: Share) {
        let zoneID: RecordZone.ID
        if let share {
            guard share.recordID.recordName == Share.zoneWideShareRecordName, LocalMirror.scope(of: share.recordID) == .private else {
                throw TandemError(.invalidArguments, "records can be added only to a zone-wide share the user owns (made by share(_:to: nil))")
            }
            zoneID = share.recordID.zoneID
        } else {
            zoneID = RecordZone.ID(zoneName: Self.shareZonePrefix + UUID().uuidString)
        }
        let related = try mirror.read { db in try RelatedRecords(records, into: zoneID, depth: depth, db) }
        let originals = related.rows.map(\.record)
        var generations: [Record.ID: Int64] = [:]
        for row in related.rows { generations[row.record.recordID] = row.edit }
        let moved = originals.map { related.copy(of: $0, into: zoneID) }
        if moved.isEmpty, let share { return ([], share) }   // everything listed is in the share already
        // Records never sent are created only in the new zone: keep a scheduled send from
        // creating them in the old one meanwhile (queued again if sharing fails).
        let unsent = originals.filter { $0.recordChangeTag == nil }.map { SyncEngine.PendingRecordZoneChange.saveRecord($0.recordID) }
        privateEngine.state.remove(pendingRecordZoneChanges: unsent)
        let database = container.privateDatabase
        var toSave = moved
        let result: ModifyRecordsResult
        var madeZone = false
        do throws(TandemError) {
            if share == nil {
                try await database.save(RecordZone(zoneID: zoneID))
                madeZone = true
                toSave.append(Share(recordZoneID: zoneID).record)
            }
            result = try await database.modifyRecords(saving: toSave, deleting: [], savePolicy: .ifServerRecordUnchanged, atomically: true)
            if let failure = result.partialFailure { throw failure }
        } catch {
            // Nothing half-moved (R36): the zone made for the share goes again (with whatever an
            // unanswered save put there), and records never sent are queued again.
            if madeZone { _ = try? await database.deleteRecordZone(withID: zoneID) }
            if !unsent.isEmpty { privateEngine.state.add(pendingRecordZoneChanges: unsent) }
            throw error
        }
        var saved: [Record] = []
        for record in toSave { if case .success(let s)? = result.saveResults[record.recordID] { saved.append(s) } }
        let savedShare: Share
        if let share {
            savedShare = share
        } else {
            guard let made = saved.first(where: { $0.recordType == Share.recordType }).flatMap(Share.init) else {
                throw TandemError(.internalError, "the server did not return the new share")
            }
            savedShare = made
        }
        try mirror.applyFetched(saved, deletions: [])
        // Edits and deletions the app made while the save was in flight follow the records into
        // the share's zone (K30): keys changed since the copies were made are saved on top of them.
        var later: [Record] = []
        var deletedMeanwhile: [Record.ID] = []
        for original in originals {
            let movedID = Record.ID(recordName: original.recordID.recordName, zoneID: zoneID)
            guard let now = try mirror.read({ db in try LocalMirror.row(db, original.recordID) }) else {
                deletedMeanwhile.append(movedID)
                continue
            }
            let since = generations[original.recordID] ?? 0
            let keys = (now.pending ?? [:]).filter { $0.value > since }.map(\.key)
            guard !keys.isEmpty, var edit = try mirror.record(for: movedID) else { continue }
            for key in keys {
                edit.fields[key] = now.record.fields[key].map { RelatedRecords.rewritten($0, into: zoneID.wire) }
                edit.pendingAssets[key] = now.record.pendingAssets[key]
            }
            edit.changed = Set(keys)
            later.append(edit)
        }
        if !later.isEmpty { try save(later) }
        try delete(originals.map(\.recordID))
        if !deletedMeanwhile.isEmpty { try delete(deletedMeanwhile) }
        var current: [Record] = []
        for record in saved where record.recordType != Share.recordType {
            if let now = try mirror.record(for: record.recordID) { current.append(now) }
        }
        return (current, savedShare)
    }

    /// Accepts invitations and mirrors the shared zones at once
    /// (`NSPersistentCloudKitContainer.acceptShareInvitations(from:into:)`).
    /// - Throws: `Container.accept`'s errors (`participantMayNeedVerification` for a private
    ///   share the user is not invited to), then the shared engine's fetch errors.
    @discardableResult
    public func acceptShareInvitations(from metadata: [ShareMetadata]) async throws(TandemError) -> [ShareMetadata] {
        for item in metadata { try await container.accept(item) }
        try await sharedEngine.fetchChanges()
        return metadata
    }

    /// Every share the store holds, in one database or both (`fetchShares(in:)`).
    public func fetchShares(in scope: Database.Scope? = nil) throws(TandemError) -> [Share] {
        let scopes = scope.map { [$0] } ?? [.private, .shared]
        return try mirror.read { db in
            try scopes.flatMap { scope in
                try db.query("SELECT body FROM record WHERE record_type = ? AND scope = ? ORDER BY zone_name, record_name",
                              [.text(Share.recordType), .text(scope.rawValue)]) { s in
                    try LocalRecordCoding.decode(s.text(0), scope: scope)
                }.compactMap(Share.init)
            }
        }
    }

    /// The share covering each record (`fetchShares(matching:)`): its zone's zone-wide share, or
    /// the share of the record or of its nearest shared ancestor. Records not shared are absent.
    public func fetchShares(matching recordIDs: [Record.ID]) throws(TandemError) -> [Record.ID: Share] {
        try mirror.read { db in
            var shares: [Record.ID: Share] = [:]
            for id in recordIDs { if let share = try Self.share(covering: id, db) { shares[id] = share } }
            return shares
        }
    }

    /// The participants of the share covering the record (empty when not shared).
    public func participants(for recordID: Record.ID) throws(TandemError) -> [Share.Participant] {
        try fetchShares(matching: [recordID])[recordID]?.participants ?? []
    }

    /// Whether the record is shared: in the shared database, or covered by a share
    /// (`NSPersistentCloudKitContainer.isShared(object:)`'s role).
    public func isShared(_ recordID: Record.ID) throws(TandemError) -> Bool {
        if LocalMirror.scope(of: recordID) == .shared { return true }
        return try fetchShares(matching: [recordID])[recordID] != nil
    }

    /// Whether the user may change the record (`canUpdateRecord(forManagedObjectWith:)`): the
    /// answer of the access policy the server enforces (TandemCore's `AccessPolicy`, decisions
    /// K19) for the user's participation in the covering share as last fetched, so it follows
    /// the owner's changes once they are mirrored. Private records: always. Changing a share
    /// record means managing its participants (owner, administrators). A record the store does
    /// not hold, or whose share it does not hold: false.
    public func canUpdateRecord(_ recordID: Record.ID) throws(TandemError) -> Bool {
        try isAllowed(recordID, deleting: false)
    }

    /// Whether the user may delete the record (`canDeleteRecord(forManagedObjectWith:)`), by the
    /// same policy: the root of a hierarchical share only by its owner; the share record by the
    /// owner (stops sharing) or any participant (leaves the share, D5); other records with
    /// `readWrite` permission.
    public func canDeleteRecord(_ recordID: Record.ID) throws(TandemError) -> Bool {
        try isAllowed(recordID, deleting: true)
    }

    private func isAllowed(_ recordID: Record.ID, deleting: Bool) throws(TandemError) -> Bool {
        if LocalMirror.scope(of: recordID) == .private { return true }
        guard let record = try mirror.record(for: recordID), let share = try fetchShares(matching: [recordID])[recordID] else { return false }
        let kind: AccessPolicy.RecordKind = record.recordType == Share.recordType ? .share
            : record.share?.recordID == share.recordID ? .root : .record
        return Self.decision(share: share, kind: kind, deleting: deleting).isAllowed
    }

    /// The policy's decision for the current user acting on a record of `kind` covered by `share`.
    static func decision(share: Share, kind: AccessPolicy.RecordKind, deleting: Bool) -> AccessPolicy.Decision {
        let publicPermission = TandemCore.Share.Permission(rawValue: share.publicPermission.rawValue) ?? .none
        let principal: AccessPolicy.Principal
        if let me = share.currentUserParticipant {
            let role = TandemCore.Share.Role(rawValue: me.role.rawValue) ?? .unknown
            principal = role == .owner ? .owner
                : AccessPolicy.principal(status: TandemCore.Share.AcceptanceStatus(rawValue: me.acceptanceStatus.rawValue) ?? .unknown,
                                         role: role, permission: TandemCore.Share.Permission(rawValue: me.permission.rawValue) ?? .none,
                                         publicPermission: publicPermission)
        } else {
            principal = .stranger
        }
        return AccessPolicy.decide(principal, AccessPolicy.action(for: kind, deleting: deleting),
                                   share: AccessPolicy.ShareFacts(publicPermission: publicPermission, allowsAccessRequests: share.allowsAccessRequests))
    }

    /// Saves a share changed by the app (participants, permissions, title) to the server and
    /// the store (`persistUpdatedShare(_:in:)`). Needs the network. When the share changed on the
    /// server meanwhile (an invitee accepted, so its change tag moved), the app's changes are
    /// applied again to the server's version and saved once more (K31).
    /// - Throws: the server's error; `serverRecordChanged` only when the share kept changing
    ///   under three attempts (fetch it again with `fetchShares` after a `sync()` and reapply).
    @discardableResult
    public func persistUpdatedShare(_ share: Share) async throws(TandemError) -> Share {
        let database = LocalMirror.scope(of: share.recordID) == .private ? container.privateDatabase : container.sharedDatabase
        let base = try mirror.record(for: share.recordID).flatMap(Share.init)
        var attempt = share
        var tries = 0
        while true {
            do throws(TandemError) {
                let saved = try await database.save(attempt.record)
                try mirror.applyFetched([saved], deletions: [])
                guard let result = Share(saved) else { throw TandemError(.internalError, "the server did not return the share") }
                return result
            } catch where error.code == .serverRecordChanged && tries < 2 {
                guard let serverRecord = error.serverRecord, let server = Share(serverRecord), let base else { throw error }
                try mirror.applyFetched([serverRecord], deletions: [])
                attempt = share.rebased(from: base, onto: server)
                tries += 1
            }
        }
    }

    /// Deletes a zone and everything in it (`purgeObjectsAndRecordsInZone(with:in:)`): locally
    /// at once; on the server a private zone is deleted, and a shared zone is left (the user's
    /// participation ends) by deleting it from the shared database. Needs the network.
    public func purgeZone(_ zoneID: RecordZone.ID) async throws(TandemError) {
        let scope = LocalMirror.scope(of: zoneID)
        let database = scope == .private ? container.privateDatabase : container.sharedDatabase
        try await database.deleteRecordZone(withID: zoneID)
        let state = engine(for: scope).state
        state.remove(pendingRecordZoneChanges: state.pendingRecordZoneChanges.filter { $0.recordID.zoneID == zoneID })
        try mirror.removeZone(zoneID)
    }

    static func share(covering id: Record.ID, _ db: SQLiteConnection) throws -> Share? {
        func shareRecord(_ shareID: Record.ID) throws -> Share? { try LocalMirror.row(db, shareID).flatMap { Share($0.record) } }
        if let zoneShare = try shareRecord(Record.ID(recordName: Share.zoneWideShareRecordName, zoneID: id.zoneID)) { return zoneShare }
        var current: Record.ID? = id
        var steps = 0
        while let next = current, steps < 64 {
            guard let record = try LocalMirror.row(db, next)?.record else { return nil }
            if record.recordType == Share.recordType { return Share(record) }
            if let shareID = record.share?.recordID, let share = try shareRecord(shareID) { return share }
            current = record.parent?.recordID
            steps += 1
        }
        return nil
    }
}
