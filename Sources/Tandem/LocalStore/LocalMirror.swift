internal import Foundation
internal import TandemCore
internal import TandemSQLite

/// The SQLite side of a `LocalStore`: every read and write of the file. Each method is one
/// transaction; fetched pages are written in one transaction each with prepared statements.
final class LocalMirror: Sendable {
    let database: SQLiteDatabase
    /// What each record's send in flight carried (compared when its answer returns, K23).
    let sentEdits = LockedDictionary<Record.ID, SentSnapshot>()
    /// Generations of local edits: unique in the file, increasing.
    let generations: Generations

    init(path: String) throws(TandemError) {
        let database: SQLiteDatabase
        do { database = try SQLiteDatabase(path: path, synchronous: .normal, readerCount: 2, migrations: LocalStoreSchema.migrations) }
        catch { throw TandemError(.internalError, "cannot open the local store \(path): \(error)") }
        let last = try Self.read(database) { db in
            try db.queryOne("SELECT max((SELECT coalesce(max(edit), 0) FROM record), (SELECT coalesce(max(edit), 0) FROM tombstone))", []) { $0.int64(0) } ?? 0
        }
        self.database = database
        generations = Generations(after: last)
    }

    /// Closes the file (`LocalStore.close()`); later reads and writes fail.
    func close() { database.close() }

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

    func read<T>(_ body: (SQLiteConnection) throws -> T) throws(TandemError) -> T { try Self.read(database, body) }

    private static func read<T>(_ database: SQLiteDatabase, _ body: (SQLiteConnection) throws -> T) throws(TandemError) -> T {
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

    /// A record row. `pending` holds each unsent key with the local edit that last changed it
    /// (nil when the row equals the server's record); `parentEdit` the edit that set the parent.
    /// A send remembers the generations it carried, so its answer clears only what it sent (K23).
    struct Row {
        var record: Record
        var pending: [String: Int64]?
        var parentEdit: Int64?
        var edit: Int64
        /// A create sent without an answer (`Unconfirmed`); only a row without a change tag keeps it.
        var unconfirmed: Unconfirmed = .no

        var changedKeys: [String]? { pending.map { $0.keys.sorted() } }
        var isDirty: Bool { pending != nil || parentEdit != nil }

        /// A row equal to the server's record.
        static func clean(_ record: Record, edit: Int64 = 0) -> Row { Row(record: record, pending: nil, parentEdit: nil, edit: edit) }
    }

    /// Whether a row never confirmed by the server may be there anyway (K32 (d)): a create was
    /// sent and no answer came, so it may have been applied, and deleted by another device since.
    /// A feed read from a token would show that deletion; a listing from the start would not.
    enum Unconfirmed: Int64 {
        /// Confirmed (the row has a change tag), or never sent.
        case no = 0
        /// Sent (a create) without an answer yet.
        case sent = 1
        /// Sent without an answer, and its zone is being listed from the start: a listing that
        /// ends without the record means it was deleted.
        case awaitingListing = 2
    }

    static let selectRow = "SELECT body, changed_keys, parent_changed, edit, unconfirmed FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?"
    static let upsertRow = """
        INSERT INTO record (scope, zone_name, owner_name, record_name, record_type, body, changed_keys, parent_changed, edit, unconfirmed)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (scope, zone_name, owner_name, record_name) DO UPDATE SET record_type = excluded.record_type,
            body = excluded.body, changed_keys = excluded.changed_keys, parent_changed = excluded.parent_changed, edit = excluded.edit,
            unconfirmed = excluded.unconfirmed
        """
    static let deleteRow = "DELETE FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?"

    static func row(_ db: SQLiteConnection, _ id: Record.ID) throws -> Row? {
        try db.queryOne(selectRow, key(id)) { s in try decodeRow(s, scope: scope(of: id)) }
    }

    /// Every row of a zone, by record name (local edits applied).
    static func rows(_ db: SQLiteConnection, inZone zoneID: RecordZone.ID) throws -> [String: Row] {
        let rows = try db.query("SELECT body, changed_keys, parent_changed, edit, unconfirmed FROM record WHERE scope = ? AND zone_name = ? AND owner_name = ?",
                                key(zoneID)) { s in try decodeRow(s, scope: scope(of: zoneID)) }
        return Dictionary(rows.map { ($0.record.recordID.recordName, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// A row from the columns of `selectRow`, in that order.
    private static func decodeRow(_ s: SQLiteStatement, scope: Database.Scope) throws -> Row {
        let edit = s.int64(3)
        return Row(record: try LocalRecordCoding.decode(s.text(0), scope: scope),
                   pending: s.isNull(1) ? nil : LocalRecordCoding.pendingKeys(s.text(1), edit: edit),
                   parentEdit: s.int64(2) == 0 ? nil : s.int64(2), edit: edit,
                   unconfirmed: Unconfirmed(rawValue: s.int64(4)) ?? .no)
    }

    /// What a row stores as `unconfirmed`: a record the server confirmed has a change tag.
    static func unconfirmedValue(_ row: Row) -> SQLiteValue {
        .integer(row.record.recordChangeTag == nil ? row.unconfirmed.rawValue : 0)
    }

    static func put(_ db: SQLiteConnection, _ row: Row, addingZone: Bool = true) throws {
        let id = row.record.recordID
        // A row dirty only by its parent still needs a non-NULL changed_keys (the dirty marker).
        let pending = row.pending ?? (row.parentEdit != nil ? [:] : nil)
        try db.run(upsertRow, key(id) + [.text(row.record.recordType), .text(LocalRecordCoding.encode(row.record)),
                                         pending.map { .text(LocalRecordCoding.pendingKeys($0)) } ?? .null,
                                         .integer(row.parentEdit ?? 0), .integer(row.edit), unconfirmedValue(row)])
        if addingZone { try db.run("INSERT OR IGNORE INTO zone (scope, zone_name, owner_name) VALUES (?, ?, ?)", key(id.zoneID)) }
    }

    // MARK: Tombstones

    static let deleteTombstone = "DELETE FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?"

    static func hasTombstone(_ db: SQLiteConnection, _ id: Record.ID) throws -> Bool {
        try db.queryOne("SELECT 1 FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ?", key(id)) { _ in true } ?? false
    }

    /// The row a local deletion removed (kept so that saving the record again changes only the
    /// keys the app changed, K24); nil for tombstones written before the body was kept.
    static func tombstonedRow(_ db: SQLiteConnection, _ id: Record.ID) throws -> Row? {
        try db.queryOne("SELECT body, changed_keys, edit, unconfirmed FROM tombstone WHERE scope = ? AND zone_name = ? AND owner_name = ? AND record_name = ? AND body IS NOT NULL",
                        key(id)) { s in
            let edit = s.int64(2)
            return Row(record: try LocalRecordCoding.decode(s.text(0), scope: scope(of: id)),
                       pending: s.isNull(1) ? nil : LocalRecordCoding.pendingKeys(s.text(1), edit: edit), parentEdit: nil, edit: edit,
                       unconfirmed: Unconfirmed(rawValue: s.int64(3)) ?? .no)
        }
    }

    static func putTombstone(_ db: SQLiteConnection, _ id: Record.ID, row: Row?) throws {
        let pending = row?.pending.map { SQLiteValue.text(LocalRecordCoding.pendingKeys($0)) } ?? .null
        try db.run("""
            INSERT INTO tombstone (scope, zone_name, owner_name, record_name, body, changed_keys, edit, unconfirmed) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (scope, zone_name, owner_name, record_name) DO UPDATE SET body = excluded.body,
                changed_keys = excluded.changed_keys, edit = excluded.edit, unconfirmed = excluded.unconfirmed
            """, key(id) + [row.map { .text(LocalRecordCoding.encode($0.record)) } ?? .null, pending, .integer(row?.edit ?? 0),
                            row.map(unconfirmedValue) ?? .integer(0)])
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
    func contains(_ key: Key) -> Bool { lock.withLock { values[key] != nil } }
}

/// The local edit counter (a row's `edit`, each pending key's generation).
final class Generations: @unchecked Sendable {
    private let lock = NSLock()
    private var last: Int64
    init(after last: Int64) { self.last = last }
    func next() -> Int64 { lock.withLock { last += 1; return last } }
}
