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
                try mirror.addZones(changes.modifications)
                for deletion in changes.deletions { try mirror.removeZone(deletion.zoneID) }
                if !changes.deletions.isEmpty { observer(.zonesRemoved(changes.deletions.map(\.zoneID))) }
            case .fetchedRecordZoneChanges(let changes):
                let dropped = try mirror.applyFetched(changes.modifications, deletions: changes.deletions.map(\.recordID))
                observer(.fetched(saved: changes.modifications.map(\.recordID), deleted: changes.deletions.map(\.recordID)))
                for record in dropped { observer(.deletedWhileEdited(record)) }
            case .recordZoneChangesRestarted(let zoneID):
                try mirror.restartZone(zoneID)
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
                }
            case .zoneNotFound where scope == .private:
                // The zone is gone (or never made it): create it and send the record again.
                mirror.forgetSent(id)
                syncEngine.state.add(pendingDatabaseChanges: [.saveZone(RecordZone(zoneID: id.zoneID))])
                again.append(.saveRecord(id))
            case .permissionFailure, .unknownItem:
                // Not allowed (a read-only participant) or gone: the server's version wins.
                mirror.forgetSent(id)
                if let current = try? await syncEngine.database.record(for: id) {
                    try mirror.applyFetched([], deletions: [id])
                    try mirror.applyFetched([current], deletions: [])
                } else {
                    try mirror.applyFetched([], deletions: [id])
                }
                observer(.refused(id, failure.error))
            default:
                // Retryable failures stay queued in the engine; the row stays dirty either way.
                mirror.forgetSent(id)
            }
        }
        if !again.isEmpty { syncEngine.state.add(pendingRecordZoneChanges: again) }
        if !sent.savedRecords.isEmpty || !sent.deletedRecordIDs.isEmpty {
            observer(.sent(saved: sent.savedRecords.map(\.recordID), deleted: sent.deletedRecordIDs))
        }
    }

    func nextRecordZoneChangeBatch(_ context: SyncEngine.SendChangesContext, syncEngine: SyncEngine) async
        -> SyncEngine.RecordZoneChangeBatch? {
        let pending = syncEngine.state.pendingRecordZoneChanges.filter { context.options.scope.contains($0) }
        let mirror = mirror
        return await SyncEngine.RecordZoneChangeBatch(pendingChanges: pending) { id in mirror.recordForSend(id) }
    }
}
