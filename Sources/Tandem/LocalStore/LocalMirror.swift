internal import Foundation
internal import TandemCore
internal import TandemSQLite

/// The SQLite side of a `LocalStore`: every read and write of the file. Each method is one
/// transaction; fetched pages are written in one transaction each with prepared statements.
final class LocalMirror: Sendable {
    let database: SQLiteDatabase
    /// Local edit counters of records handed to a send, by record (compared when the save returns).
    private let sentEdits = LockedDictionary<Record.ID, Int64>()

    init(path: String) throws(TandemError) {
        do { database = try SQLiteDatabase(path: path, synchronous: .normal, readerCount: 2, migrations: LocalStoreSchema.migrations) }
        catch { throw TandemError(.internalError, "cannot open the local store \(path): \(error)") }
    }

    static func scope(of id: Record.ID) -> Database.Scope { scope(of: id.zoneID) }
    static func scope(of zoneID: RecordZone.ID) -> Database.Scope {
        zoneID.ownerName == RecordZone.ID.currentUserOwnerName ? .private : .shared
    }

    static func key(_ id: Record.ID) -> [SQLiteValue] {
        [.text(scope(of: id).rawValue), .text(id.zoneID.zoneName), .text(id.zoneID.ownerName), .text(id.recordName)]
    }

    static func key(_ zoneID: RecordZone.ID) -> [SQLiteValue] {
        [.text(scope(of: zoneID).rawValue), .text(zoneID.zoneName), .text(zoneID.ownerName)]
    }

    // MARK: Transactions

    func read<T>(_ body: (SQLiteConnection) throws -> T) throws(TandemError) -> T {
        do { return try database.read(body) } catch let error as TandemError { throw error } catch {
            throw TandemError(.internalError, "local store read failed: \(error)")
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) throws(TandemError) -> T {
        do { return try database.write(body) } catch let error as TandemError { throw error } catch {
            throw TandemError(.internalError, "local store write failed: \(error)")
        }
    }

    // MARK: Rows

    struct Row {
        var record: Record
        var changedKeys: [String]?
        var parentChanged: Bool
        var edit: Int64
    }

    static let selectRow = "SELECT body, changed_keys, parent_changed, edit FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?"
    static let upsertRow = """
        INSERT INTO record (scope, zone_name, owner_name, record_name, record_type, body, changed_keys, parent_changed, edit)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (scope, zone_name, owner_name, record_name) DO UPDATE SET record_type = excluded.record_type,
            body = excluded.body, changed_keys = excluded.changed_keys, parent_changed = excluded.parent_changed, edit = excluded.edit
        """
    static let deleteRow = "DELETE FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?"

    static func row(_ db: SQLiteConnection, _ id: Record.ID) throws -> Row? {
        try db.queryOne(selectRow, key(id)) { s in
            Row(record: try LocalRecordCoding.decode(s.text(0), scope: scope(of: id)),
                changedKeys: s.isNull(1) ? nil : LocalRecordCoding.keys(s.text(1)), parentChanged: s.int64(2) != 0, edit: s.int64(3))
        }
    }

    static func put(_ db: SQLiteConnection, _ row: Row, addingZone: Bool = true) throws {
        let id = row.record.recordID
        try db.run(upsertRow, key(id) + [.text(row.record.recordType), .text(LocalRecordCoding.encode(row.record)),
                                         row.changedKeys.map { .text(LocalRecordCoding.keys($0)) } ?? .null,
                                         .integer(row.parentChanged ? 1 : 0), .integer(row.edit)])
        if addingZone { try db.run("INSERT OR IGNORE INTO zone (scope, zone_name, owner_name) VALUES (?, ?, ?)", key(id.zoneID)) }
    }

    /// Makes the indexes the app asked for (`LocalStore.Configuration.indexes`).
    func createIndexes(_ indexes: [LocalStore.Index]) throws(TandemError) {
        guard !indexes.isEmpty else { return }
        try write { db in
            for index in indexes {
                let name = "field:\(index.recordType):\(index.field)".replacingOccurrences(of: "\"", with: "\"\"")
                try db.execute("CREATE INDEX IF NOT EXISTS \"\(name)\" ON record (record_type, \(LocalQuery.fieldExpression(index.field)))")
            }
        }
    }

    /// The record as the app sees it (local edits applied).
    func record(for id: Record.ID) throws(TandemError) -> Record? {
        try read { db in try Self.row(db, id)?.record }
    }

    // MARK: Local edits

    /// Applies the app's edits: for a record the store holds, only the keys the app changed (and
    /// the parent when set), on top of the newest row; a new record as it is.
    func saveLocal(_ records: [Record]) throws(TandemError) {
        try write { db in
            for record in records {
                if var row = try Self.row(db, record.recordID) {
                    for key in record.changed {
                        row.record.fields[key] = record.fields[key]
                        row.record.pendingAssets[key] = record.pendingAssets[key]
                    }
                    if record.parentChanged { row.record.parent = record.parent; row.parentChanged = true }
                    row.changedKeys = Array(Set(row.changedKeys ?? []).union(record.changed)).sorted()
                    row.edit += 1
                    try Self.put(db, row)
                } else {
                    var fresh = record
                    fresh.changed = []
                    try Self.put(db, Row(record: fresh, changedKeys: record.fields.keys.sorted(), parentChanged: record.parent != nil, edit: 1))
                }
                try db.run("DELETE FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?", Self.key(record.recordID))
            }
        }
    }

    /// Removes records; returns those the server has (they need a delete sent).
    func deleteLocal(_ ids: [Record.ID]) throws(TandemError) -> [Record.ID] {
        try write { db in
            var known: [Record.ID] = []
            for id in ids {
                let tag = try Self.row(db, id)?.record.recordChangeTag
                try db.run(Self.deleteRow, Self.key(id))
                if tag != nil {
                    known.append(id)
                    try db.run("INSERT OR IGNORE INTO tombstone (scope, zone_name, owner_name, record_name) VALUES (?, ?, ?, ?)", Self.key(id))
                }
            }
            return known
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

    // MARK: Sending

    /// The record to send for a pending save: the row with its unsent keys marked changed.
    func recordForSend(_ id: Record.ID) -> Record? {
        guard let row = try? read({ db in try Self.row(db, id) }), let keys = row.changedKeys else { return nil }
        var record = row.record
        record.changed = Set(keys)
        record.parentChanged = row.parentChanged
        sentEdits.set(id, row.edit)
        return record
    }

    /// Saved records: a row not edited since it was sent becomes the server's record; an edited
    /// one keeps its edits and takes the new change tag.
    func applySaved(_ records: [Record]) throws(TandemError) {
        let edits = records.map { sentEdits.take($0.recordID) }
        try write { db in
            for (saved, sentEdit) in zip(records, edits) {
                guard var row = try Self.row(db, saved.recordID) else { continue }
                if row.edit == sentEdit {
                    try Self.put(db, Row(record: saved, changedKeys: nil, parentChanged: false, edit: row.edit))
                } else {
                    row.record.recordChangeTag = saved.recordChangeTag
                    try Self.put(db, row)
                }
            }
        }
    }

    func forgetSent(_ id: Record.ID) { _ = sentEdits.take(id) }

    /// A save the server refused with `serverRecordChanged`: `merge` decides from the local and
    /// server records; the result (server change tag) is written and stays dirty. Returns whether
    /// a save must be queued again.
    func resolveConflict(server: Record, merge: @Sendable (LocalStore.Conflict) -> Record?) throws(TandemError) -> Bool {
        _ = sentEdits.take(server.recordID)
        guard let row = try read({ db in try Self.row(db, server.recordID) }) else { return false }
        let conflict = LocalStore.Conflict(localRecord: row.record, serverRecord: server, changedKeys: row.changedKeys ?? [])
        guard var merged = merge(conflict) else {
            try write { db in try Self.put(db, Row(record: server, changedKeys: nil, parentChanged: false, edit: row.edit + 1)) }
            return false
        }
        merged.recordChangeTag = server.recordChangeTag
        let keys = Array(Set(row.changedKeys ?? []).union(merged.changed)).sorted()
        merged.changed = []
        let result = Row(record: merged, changedKeys: keys, parentChanged: row.parentChanged, edit: row.edit + 1)
        try write { db in try Self.put(db, result) }
        return true
    }

    func removeTombstones(_ ids: [Record.ID]) throws(TandemError) {
        guard !ids.isEmpty else { return }
        try write { db in
            for id in ids { try db.run("DELETE FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?", Self.key(id)) }
        }
    }

    // MARK: Fetched changes

    /// One fetched page in one transaction. A row with unsent edits is rebased: the server's
    /// record with the local keys applied on top (they are sent with the new change tag). A
    /// deleted row goes even with unsent edits; those rows are returned as they were (K22).
    @discardableResult
    func applyFetched(_ records: [Record], deletions: [Record.ID]) throws(TandemError) -> [Record] {
        try write { db -> [Record] in
            // Rows with unsent edits are few: read their keys once per page, not a row per record.
            var dirty = Set<Record.ID>()
            for scope in Set(records.map { Self.scope(of: $0.recordID) }) {
                for id in try db.query("SELECT zone_name, owner_name, record_name FROM record WHERE scope = ? AND changed_keys IS NOT NULL",
                                       [.text(scope.rawValue)], { Record.ID(recordName: $0.text(2), zoneID: RecordZone.ID(zoneName: $0.text(0), ownerName: $0.text(1))) }) {
                    dirty.insert(id)
                }
            }
            for zoneID in Set(records.map(\.recordID.zoneID)) {
                try db.run("INSERT OR IGNORE INTO zone (scope, zone_name, owner_name) VALUES (?, ?, ?)", Self.key(zoneID))
            }
            for record in records {
                if dirty.contains(record.recordID), var row = try Self.row(db, record.recordID), let keys = row.changedKeys {
                    var rebased = record
                    for key in keys { rebased.fields[key] = row.record.fields[key]; rebased.pendingAssets[key] = row.record.pendingAssets[key] }
                    if row.parentChanged { rebased.parent = row.record.parent }
                    row.record = rebased
                    try Self.put(db, row, addingZone: false)
                } else {
                    try Self.put(db, Row(record: record, changedKeys: nil, parentChanged: false, edit: 0), addingZone: false)
                }
            }
            var dropped: [Record] = []
            for id in deletions {
                if let row = try Self.row(db, id), row.changedKeys != nil || row.parentChanged { dropped.append(row.record) }
                try db.run(Self.deleteRow, Self.key(id))
                try db.run("DELETE FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?", Self.key(id))
            }
            return dropped
        }
    }

    func addZones(_ zoneIDs: [RecordZone.ID]) throws(TandemError) {
        guard !zoneIDs.isEmpty else { return }
        try write { db in
            for id in zoneIDs { try db.run("INSERT OR IGNORE INTO zone (scope, zone_name, owner_name) VALUES (?, ?, ?)", Self.key(id)) }
        }
    }

    /// Forgets a zone and everything in it (deleted, purged, or access lost).
    func removeZone(_ zoneID: RecordZone.ID) throws(TandemError) {
        try write { db in
            let key = Self.key(zoneID)
            try db.run("DELETE FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ?", key)
            try db.run("DELETE FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ?", key)
            try db.run("DELETE FROM zone WHERE scope = ? AND zone_name = ? AND owner_name = ?", key)
        }
    }

    /// A zone's feed restarts from the beginning: rows without local edits are dropped (the
    /// refetch brings back what still exists).
    func restartZone(_ zoneID: RecordZone.ID) throws(TandemError) {
        try write { db in
            try db.run("DELETE FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND changed_keys IS NULL", Self.key(zoneID))
        }
    }

    func zones(scope: Database.Scope) throws(TandemError) -> [RecordZone.ID] {
        try read { db in
            try db.query("SELECT zone_name, owner_name FROM zone WHERE scope = ?", [.text(scope.rawValue)]) {
                RecordZone.ID(zoneName: $0.text(0), ownerName: $0.text(1))
            }
        }
    }

    // MARK: Engine state

    func state(scope: Database.Scope) throws(TandemError) -> SyncEngine.State.Serialization? {
        let text = try read { db in try db.queryOne("SELECT state FROM engine_state WHERE scope = ?", [.text(scope.rawValue)]) { $0.text(0) } }
        guard let text else { return nil }
        return try? JSONDecoder().decode(SyncEngine.State.Serialization.self, from: Data(text.utf8))
    }

    func saveState(_ state: SyncEngine.State.Serialization, scope: Database.Scope) throws(TandemError) {
        guard let data = try? JSONEncoder().encode(state) else { return }
        let text = String(decoding: data, as: UTF8.self)
        try write { db in
            try db.run("INSERT INTO engine_state (scope, state) VALUES (?, ?) ON CONFLICT (scope) DO UPDATE SET state = excluded.state",
                       [.text(scope.rawValue), .text(text)])
        }
    }

    /// Forgets everything of one database (account change).
    func removeAll(scope: Database.Scope) throws(TandemError) {
        try write { db in
            for table in ["record", "tombstone", "zone", "engine_state"] {
                try db.run("DELETE FROM \(table) WHERE scope = ?", [.text(scope.rawValue)])
            }
        }
    }
}

/// A dictionary behind a lock.
final class LockedDictionary<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Key: Value] = [:]

    func set(_ key: Key, _ value: Value) { lock.withLock { values[key] = value } }
    func take(_ key: Key) -> Value? { lock.withLock { values.removeValue(forKey: key) } }
}
