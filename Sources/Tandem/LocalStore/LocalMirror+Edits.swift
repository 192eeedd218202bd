internal import Foundation
internal import TandemCore
internal import TandemSQLite

/// Local edits, sends and their answers. Every unsent key carries the generation of the edit
/// that last changed it; a send remembers the generations it carried (`SentSnapshot`), so an
/// acknowledgement or a merge clears only what was sent and keeps what was edited meanwhile (K23).
extension LocalMirror {
    /// What one send carried of a row.
    struct SentSnapshot: Sendable {
        var pending: [String: Int64]
        var parentEdit: Int64?
        /// The row's mark before this send (restored when the send surely was not applied).
        var unconfirmed: Unconfirmed = .no
    }

    // MARK: Local edits

    /// Applies the app's edits: for a record the store holds (or deleted here and not yet sent),
    /// only the keys the app changed (and the parent when set), on top of the newest row; a new
    /// record as it is (K24).
    func saveLocal(_ records: [Record]) throws(TandemError) {
        let generations = generations
        try write { db in
            for record in records {
                let edit = generations.next()
                if var row = try Self.row(db, record.recordID) ?? Self.tombstonedRow(db, record.recordID) {
                    var pending = row.pending ?? [:]
                    for key in record.changed {
                        row.record.fields[key] = record.fields[key]
                        row.record.pendingAssets[key] = record.pendingAssets[key]
                        pending[key] = edit
                    }
                    if record.parentChanged { row.record.parent = record.parent; row.parentEdit = edit }
                    row.pending = pending.isEmpty && row.pending == nil ? nil : pending
                    row.edit = edit
                    try Self.put(db, row)
                } else {
                    var fresh = record
                    fresh.changed = []
                    // A record with a change tag the store does not hold: its changed keys only (K24).
                    let keys = record.recordChangeTag == nil || record.changed.isEmpty ? Array(record.fields.keys) : Array(record.changed)
                    try Self.put(db, Row(record: fresh, pending: Dictionary(keys.map { ($0, edit) }, uniquingKeysWith: max),
                                         parentEdit: record.parent != nil ? edit : nil, edit: edit))
                }
                try db.run(Self.deleteTombstone, Self.key(record.recordID))
            }
        }
    }

    /// Removes records; each removed row leaves a tombstone holding it, and its deletion is sent
    /// even when the record was never acknowledged (its create may be in flight or its answer
    /// lost: deleting what the server does not have is a no-op). Returns the IDs to send.
    func deleteLocal(_ ids: [Record.ID]) throws(TandemError) -> [Record.ID] {
        try write { db in
            var removed: [Record.ID] = []
            for id in ids {
                guard let row = try Self.row(db, id) else { continue }
                try db.run(Self.deleteRow, Self.key(id))
                try Self.putTombstone(db, id, row: row)
                removed.append(id)
            }
            return removed
        }
    }

    /// Changes not yet on the server (dirty rows and tombstones), to queue again at launch.
    func unsentChanges(scope: Database.Scope) throws(TandemError) -> [SyncEngine.PendingRecordZoneChange] {
        try read { db in
            let saves = try db.query("SELECT zone_name, owner_name, record_name FROM record WHERE scope = ? AND changed_keys IS NOT NULL",
                                     [.text(scope.rawValue)]) { s in
                SyncEngine.PendingRecordZoneChange.saveRecord(Record.ID(recordName: s.text(2), zoneID: RecordZone.ID(zoneName: s.text(0), ownerName: s.text(1))))
            }
            let deletes = try db.query("SELECT zone_name, owner_name, record_name FROM tombstone WHERE scope = ?", [.text(scope.rawValue)]) { s in
                SyncEngine.PendingRecordZoneChange.deleteRecord(Record.ID(recordName: s.text(2), zoneID: RecordZone.ID(zoneName: s.text(0), ownerName: s.text(1))))
            }
            return saves + deletes
        }
    }

    /// Unsent edits and deletions in one zone (reported before the zone is dropped).
    func unsent(inZone zoneID: RecordZone.ID) throws(TandemError) -> (records: [Record], deletions: [Record.ID]) {
        try read { db in
            let key = Self.key(zoneID)
            let records = try db.query("SELECT body FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND changed_keys IS NOT NULL", key) { s in
                try LocalRecordCoding.decode(s.text(0), scope: Self.scope(of: zoneID))
            }
            let deletions = try db.query("SELECT record_name FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ?", key) { s in
                Record.ID(recordName: s.text(0), zoneID: zoneID)
            }
            return (records, deletions)
        }
    }

    // MARK: Sending

    /// The record to send for a pending save: the row with its unsent keys marked changed; the
    /// generations sent are remembered until the answer.
    /// A create (no change tag) is marked unconfirmed before it leaves: from now until an answer
    /// or a fetch confirms it, it may be on the server (K32 (d)).
    func recordForSend(_ id: Record.ID) -> Record? {
        guard let row = try? read({ db in try Self.row(db, id) }), row.isDirty else { return nil }
        if row.record.recordChangeTag == nil && row.unconfirmed == .no {
            _ = try? write { db in
                try db.run("UPDATE record SET unconfirmed = 1 WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ? AND unconfirmed = 0",
                           Self.key(id))
            }
        }
        var record = row.record
        record.changed = Set(row.pending.map { Array($0.keys) } ?? [])
        record.parentChanged = row.parentEdit != nil
        sentEdits.set(id, SentSnapshot(pending: row.pending ?? [:], parentEdit: row.parentEdit, unconfirmed: row.unconfirmed))
        return record
    }

    /// Whether a send of this record is waiting for its answer.
    func isInFlight(_ id: Record.ID) -> Bool { sentEdits.contains(id) }

    /// The row with the keys `sent` carried cleared, on top of `server`: keys (and the parent)
    /// edited since keep the local value and stay unsent.
    static func rebase(_ row: Row, onto server: Record, clearing sent: SentSnapshot?) -> Row {
        var record = server
        var pending: [String: Int64] = [:]
        for (key, generation) in row.pending ?? [:] where sent?.pending[key] != generation {
            pending[key] = generation
            record.fields[key] = row.record.fields[key]
            record.pendingAssets[key] = row.record.pendingAssets[key]
        }
        var parentEdit: Int64?
        if let edit = row.parentEdit, sent?.parentEdit != edit {
            parentEdit = edit
            record.parent = row.record.parent
        }
        return Row(record: record, pending: pending.isEmpty && parentEdit == nil ? nil : pending, parentEdit: parentEdit, edit: row.edit)
    }

    /// Saved records: each becomes the server's record, with the keys edited since its send on
    /// top (still unsent). A row deleted meanwhile stays deleted (its deletion is queued).
    func applySaved(_ records: [Record]) throws(TandemError) {
        let sent = records.map { sentEdits.take($0.recordID) }
        try write { db in
            for (saved, snapshot) in zip(records, sent) {
                guard let row = try Self.row(db, saved.recordID) else { continue }
                // Without a snapshot nothing is known to be acknowledged: every key stays unsent.
                try Self.put(db, Self.rebase(row, onto: saved, clearing: snapshot ?? SentSnapshot(pending: [:], parentEdit: nil)))
            }
        }
    }

    /// Forgets a send's snapshot. `notApplied`: the server surely did not apply it (it answered,
    /// or could not be reached), so a create's mark goes back to what it was before the send.
    func forgetSent(_ id: Record.ID, notApplied: Bool = false) {
        guard let snapshot = sentEdits.take(id), notApplied, snapshot.unconfirmed == .no else { return }
        _ = try? write { db in
            try db.run("UPDATE record SET unconfirmed = 0 WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ? AND unconfirmed = 1",
                       Self.key(id))
        }
    }

    // MARK: Listings from the start

    /// A zone is about to be listed from the start (no token, or an expired one): creates sent
    /// without an answer now wait for the listing to say whether the server has them (K32 (d)).
    func beginListing(_ zoneID: RecordZone.ID) throws(TandemError) {
        try write { db in
            try db.run("UPDATE record SET unconfirmed = 2 WHERE scope = ? AND zone_name = ? AND owner_name = ? AND unconfirmed = 1", Self.key(zoneID))
        }
    }

    /// A zone's listing is complete: creates it did not confirm (no change tag yet) are not on
    /// the server. Since each was sent and may have been applied, another device may have
    /// deleted it, and a listing has no tombstones: deletion wins (K22). The rows are removed
    /// and returned as they were, for `deletedWhileEdited`.
    func endListing(_ zoneID: RecordZone.ID) throws(TandemError) -> [Record] {
        let dropped = try write { db -> [Record] in
            let key = Self.key(zoneID)
            let records = try db.query("SELECT body FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND unconfirmed = 2", key) { s in
                try LocalRecordCoding.decode(s.text(0), scope: Self.scope(of: zoneID))
            }
            try db.run("DELETE FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND unconfirmed = 2", key)
            return records
        }
        for record in dropped { _ = sentEdits.take(record.recordID) }
        return dropped
    }

    /// A save the server refused with `serverRecordChanged`: `merge` decides from the local and
    /// server records (called outside any transaction: it may take its time or save); the result
    /// gets the server's change tag and stays unsent. Keys the app edited while `merge` ran are
    /// kept on top; a record deleted meanwhile stays deleted. Returns whether to queue a save.
    func resolveConflict(server: Record, merge: @Sendable (LocalStore.Conflict) -> Record?) throws(TandemError) -> Bool {
        _ = sentEdits.take(server.recordID)
        guard let before = try read({ db in try Self.row(db, server.recordID) }) else { return false }
        let conflict = LocalStore.Conflict(localRecord: before.record, serverRecord: server, changedKeys: before.changedKeys ?? [])
        let merged = merge(conflict)
        let generations = generations
        return try write { db -> Bool in
            guard let now = try Self.row(db, server.recordID) else { return false }
            let edit = generations.next()
            var result: Row
            if var merged {
                merged.recordChangeTag = server.recordChangeTag
                var pending: [String: Int64] = [:]
                for key in Set(before.pending.map { Array($0.keys) } ?? []).union(merged.changed) { pending[key] = edit }
                merged.changed = []
                result = Row(record: merged, pending: pending, parentEdit: before.parentEdit.map { _ in edit }, edit: edit)
            } else {
                result = .clean(server, edit: edit)
            }
            // Edits saved while merge ran (generations newer than the row it was given).
            for (key, generation) in now.pending ?? [:] where generation > before.edit {
                result.pending = (result.pending ?? [:]).merging([key: generation]) { _, new in new }
                result.record.fields[key] = now.record.fields[key]
                result.record.pendingAssets[key] = now.record.pendingAssets[key]
            }
            if let parentEdit = now.parentEdit, parentEdit > before.edit {
                result.parentEdit = parentEdit
                result.record.parent = now.record.parent
            }
            try Self.put(db, result)
            return result.isDirty
        }
    }

    /// A change the server refused for good: the row shows `current` (the server's record, or
    /// nothing), and the local version that was not kept is returned for the app's event.
    func refuse(_ id: Record.ID, current: Record?) throws(TandemError) -> Record? {
        _ = sentEdits.take(id)
        return try write { db -> Record? in
            let local = try Self.row(db, id)?.record ?? Self.tombstonedRow(db, id)?.record
            try db.run(Self.deleteRow, Self.key(id))
            try db.run(Self.deleteTombstone, Self.key(id))
            if let current { try Self.put(db, .clean(current)) }
            return local
        }
    }

    func removeTombstones(_ ids: [Record.ID]) throws(TandemError) {
        guard !ids.isEmpty else { return }
        try write { db in
            for id in ids { try db.run(Self.deleteTombstone, Self.key(id)) }
        }
    }

    // MARK: Fetched changes

    /// One fetched page in one transaction. On a row with unsent edits, keys the fetched record
    /// already holds with the local value are acknowledged (no longer unsent: a save whose answer
    /// was lost). When the record changed on the server since the row's version (another change
    /// tag) and unsent keys remain, that is a conflict as a send's `serverRecordChanged` is
    /// (K33): with `detectingConflicts` the row is left as it is and the server's record returned
    /// in `conflicts`, for `resolveConflict` (the merge closure) outside the transaction;
    /// otherwise (and for a row whose send is in flight) it is rebased: the server's record with
    /// the local keys on top. A record deleted here and not yet sent stays deleted. A deleted row
    /// goes even with unsent edits; those rows are returned in `dropped` as they were (K22).
    @discardableResult
    func applyFetched(_ records: [Record], deletions: [Record.ID], detectingConflicts: Bool = false)
        throws(TandemError) -> (dropped: [Record], conflicts: [Record]) {
        let inFlight = Set(records.map(\.recordID).filter(isInFlight))
        return try write { db -> (dropped: [Record], conflicts: [Record]) in
            var conflicts: [Record] = []
            // Rows with unsent edits and tombstones are few: read them once per page, not per record.
            var dirty = Set<Record.ID>()
            var buried = Set<Record.ID>()
            func ids(_ sql: String, _ scope: Database.Scope) throws -> [Record.ID] {
                try db.query(sql, [.text(scope.rawValue)]) { Record.ID(recordName: $0.text(2), zoneID: RecordZone.ID(zoneName: $0.text(0), ownerName: $0.text(1))) }
            }
            for scope in Set(records.map { Self.scope(of: $0.recordID) }) {
                dirty.formUnion(try ids("SELECT zone_name, owner_name, record_name FROM record WHERE scope = ? AND changed_keys IS NOT NULL", scope))
                buried.formUnion(try ids("SELECT zone_name, owner_name, record_name FROM tombstone WHERE scope = ?", scope))
            }
            for zoneID in Set(records.map(\.recordID.zoneID)) {
                try db.run("INSERT OR IGNORE INTO zone (scope, zone_name, owner_name) VALUES (?, ?, ?)", Self.key(zoneID))
            }
            for record in records where !buried.contains(record.recordID) {
                if dirty.contains(record.recordID), var row = try Self.row(db, record.recordID), row.isDirty {
                    if !inFlight.contains(record.recordID) { row = Self.acknowledging(row, by: record) }
                    if !row.isDirty {
                        try Self.put(db, .clean(record, edit: row.edit), addingZone: false)
                    } else if detectingConflicts && !inFlight.contains(record.recordID)
                                && record.recordChangeTag != row.record.recordChangeTag {
                        try Self.put(db, row, addingZone: false)
                        conflicts.append(record)
                    } else {
                        try Self.put(db, Self.rebase(row, onto: record, clearing: nil), addingZone: false)
                    }
                } else {
                    try Self.put(db, .clean(record), addingZone: false)
                }
            }
            var dropped: [Record] = []
            for id in deletions {
                if let row = try Self.row(db, id), row.isDirty { dropped.append(row.record) }
                try db.run(Self.deleteRow, Self.key(id))
                try db.run(Self.deleteTombstone, Self.key(id))
            }
            return (dropped, conflicts)
        }
    }

    /// The row without the unsent keys (and parent) that `server` already holds with the local
    /// value: the server has them, whoever sent them.
    static func acknowledging(_ row: Row, by server: Record) -> Row {
        var row = row
        if var pending = row.pending {
            for key in pending.keys where row.record.pendingAssets[key] == nil && row.record.fields[key] == server.fields[key] {
                pending.removeValue(forKey: key)
            }
            row.pending = pending.isEmpty ? nil : pending
        }
        if row.parentEdit != nil && row.record.parent == server.parent { row.parentEdit = nil }
        if row.pending?.isEmpty == true && row.parentEdit == nil { row.pending = nil }
        return row
    }
}
