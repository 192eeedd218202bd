internal import Foundation

/// Writes one sync engine's events into the mirror, and builds its send batches from the rows.
final class LocalStoreSyncDelegate: SyncEngineDelegate {
    let scope: Database.Scope
    let mirror: LocalMirror
    let merge: @Sendable (LocalStore.Conflict) -> Record?
    let observer: @Sendable (LocalStore.Change) -> Void

    init(scope: Database.Scope, mirror: LocalMirror, merge: @escaping @Sendable (LocalStore.Conflict) -> Record?,
         observer: @escaping @Sendable (LocalStore.Change) -> Void) {
        self.scope = scope
        self.mirror = mirror
        self.merge = merge
        self.observer = observer
    }

    func handleEvent(_ event: SyncEngine.Event, syncEngine: SyncEngine) async {
        do throws(TandemError) {
            switch event {
            case .stateUpdate(let state):
                try mirror.saveState(state, scope: scope)
            case .accountChange(let change):
                switch change {
                case .signIn: break
                case .signOut, .switchAccounts:
                    try mirror.removeAll(scope: scope)
                    observer(.accountChanged(scope))
                }
            case .fetchedDatabaseChanges(let changes):
                // Removals first: a zone removed and then changed again (access lost, then a new
                // invitation accepted) is dropped here and fetched again from the start (K28).
                for deletion in changes.deletions {
                    let unsent = try mirror.unsent(inZone: deletion.zoneID)
                    try mirror.removeZone(deletion.zoneID)
                    if !unsent.records.isEmpty || !unsent.deletions.isEmpty {
                        observer(.unsentChangesLost(deletion.zoneID, records: unsent.records, deletedRecordIDs: unsent.deletions))
                    }
                }
                if !changes.deletions.isEmpty {
                    let gone = Set(changes.deletions.map(\.zoneID))
                    syncEngine.state.remove(pendingRecordZoneChanges: syncEngine.state.pendingRecordZoneChanges.filter {
                        gone.contains($0.recordID.zoneID) && !changes.modifications.contains($0.recordID.zoneID)
                    })
                    observer(.zonesRemoved(changes.deletions.map(\.zoneID)))
                }
                try mirror.addZones(changes.modifications)
            case .fetchedRecordZoneChanges(let changes):
                let (dropped, conflicts) = try mirror.applyFetched(changes.modifications, deletions: changes.deletions.map(\.recordID),
                                                                   detectingConflicts: true)
                observer(.fetched(saved: changes.modifications.map(\.recordID), deleted: changes.deletions.map(\.recordID)))
                for record in dropped { observer(.deletedWhileEdited(record)) }
                // A fetched change to a record with unsent keys is a conflict, as a send's
                // serverRecordChanged is: merged, reported, and the result queued (K33).
                var again: [SyncEngine.PendingRecordZoneChange] = []
                for server in conflicts {
                    if try mirror.resolveConflict(server: server, merge: merge) { again.append(.saveRecord(server.recordID)) }
                    observer(.conflict(server.recordID))
                }
                if !again.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: again) }
            case .recordZoneChangesRestarted(let zoneID):
                try mirror.restartZone(zoneID)
                try mirror.beginListing(zoneID)
            case .willFetchRecordZoneChanges(let zoneID) where !syncEngine.hasFetched(zoneID):
                // Read from the start: no tombstones in what follows (K32 (d)).
                try mirror.beginListing(zoneID)
            case .didFetchRecordZoneChanges(let zoneID, nil):
                // Creates sent without an answer that the listing did not hold were deleted
                // elsewhere after they landed (or never landed): deletion wins (K22).
                let dropped = try mirror.endListing(zoneID)
                if !dropped.isEmpty {
                    syncEngine.state.remove(pendingRecordZoneChanges: dropped.map { .saveRecord($0.recordID) })
                    for record in dropped { observer(.deletedWhileEdited(record)) }
                }
            case .sentRecordZoneChanges(let sent):
                try await handleSent(sent, syncEngine: syncEngine)
            case .sentDatabaseChanges, .willFetchChanges, .didFetchChanges, .willFetchRecordZoneChanges,
                 .didFetchRecordZoneChanges, .willSendChanges, .didSendChanges:
                break
            }
        } catch {
            observer(.failed(error))
        }
    }

    private func handleSent(_ sent: SyncEngine.SentRecordZoneChanges, syncEngine: SyncEngine) async throws(TandemError) {
        try mirror.applySaved(sent.savedRecords)
        try mirror.removeTombstones(sent.deletedRecordIDs)
        var again: [SyncEngine.PendingRecordZoneChange] = []
        for failure in sent.failedRecordSaves {
            let id = failure.record.recordID
            switch failure.error.code {
            case .serverRecordChanged:
                if let server = failure.error.serverRecord {
                    if try mirror.resolveConflict(server: server, merge: merge) { again.append(.saveRecord(id)) }
                    observer(.conflict(id))
                } else {
                    mirror.forgetSent(id)
                    again.append(.saveRecord(id))
                }
            case .zoneNotFound where scope == .private && !syncEngine.hasFetched(id.zoneID):
                // The zone never made it to the server: create it and send the record again. A zone
                // this engine has fetched was deleted elsewhere: the deletion wins (K22), below.
                mirror.forgetSent(id, notApplied: true)
                syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: id.zoneID))])
                again.append(.saveRecord(id))
            case let code where Self.refusesRecord(code):
                // Refused for good (permission, gone, no access to the zone, too large): the row shows
                // the server's version and the app is told, with the local version (K26).
                let current = code == .zoneNotFound ? nil : try? await syncEngine.database.record(for: id)
                if let local = try mirror.refuse(id, current: current) { observer(.refused(local, failure.error)) }
            default:
                // Retryable failures stay queued in the engine. Anything else (the request as a whole
                // failed, e.g. notAuthenticated) is queued again: the row stays unsent, never dropped.
                // Unless the answer was lost, the server did not apply it (K32 (d)).
                mirror.forgetSent(id, notApplied: !Self.mayHaveBeenApplied(failure.error.code))
                if !failure.error.isRetryable && failure.error.code != .batchRequestFailed { again.append(.saveRecord(id)) }
            }
        }
        for (id, error) in sent.failedRecordDeletes where !error.isRetryable && error.code != .batchRequestFailed {
            if Self.refusesRecord(error.code) && error.code != .zoneNotFound && error.code != .unknownItem {
                // Not allowed to delete (a read-only participant): the record comes back.
                let current = try? await syncEngine.database.record(for: id)
                if let local = try mirror.refuse(id, current: current) { observer(.refused(local, error)) }
            } else if error.code == .zoneNotFound && scope == .shared {
                // Access to the zone was lost with the deletion unsent: say so, with the record (K27).
                if let local = try mirror.refuse(id, current: nil) { observer(.refused(local, error)) }
            } else if Self.refusesRecord(error.code) {
                try mirror.removeTombstones([id])
            } else {
                again.append(.deleteRecord(id))
            }
        }
        if !again.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: again) }
        if !sent.savedRecords.isEmpty || !sent.deletedRecordIDs.isEmpty {
            observer(.sent(saved: sent.savedRecords.map(\.recordID), deleted: sent.deletedRecordIDs))
        }
    }

    /// A failure after which the server may have applied the request: its answer was lost.
    static func mayHaveBeenApplied(_ code: TandemError.Code) -> Bool { code == .networkFailure || code == .serverResponseLost }

    /// Per-record answers that no retry changes.
    static func refusesRecord(_ code: TandemError.Code) -> Bool {
        switch code {
        case .permissionFailure, .unknownItem, .zoneNotFound, .userDeletedZone, .limitExceeded, .invalidArguments,
             .serverRejectedRequest, .constraintViolation, .referenceViolation, .quotaExceeded, .assetFileNotFound:
            true
        default:
            false
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch? {
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        let mirror = mirror
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { id in mirror.recordForSend(id) }
    }
}
