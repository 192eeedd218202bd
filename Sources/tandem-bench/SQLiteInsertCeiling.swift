import Foundation
import TandemCore
import TandemServer
import TandemStore
import TandemSQLite

/// Ceiling (b): SQLite alone doing, one transaction per record on one connection, the inserts
/// `putRecord` makes for one created record — the zone's change_seq bump, the existence check,
/// the records row, its field_index rows and the changes row — with the same SQL texts.
///
/// The file is a fresh Tandem store (migrations applied, WAL) at the given `synchronous`.
enum SQLiteInsertCeiling {
    struct Result {
        var synchronous: SQLiteSynchronous
        var records: Int
        var seconds: Double
        /// CPU seconds the loop's thread used (SQLite runs on it; fsync waits are not CPU).
        var cpuSeconds: Double
        var recordsPerSecond: Double { Double(records) / seconds }
    }

    /// The fields the create benchmark sends: `{"title": "Bench note", "stars": 5}`.
    static let fields: [String: FieldValue] = ["title": .string("Bench note"), "stars": .int64(5)]

    /// `field_index` rows `FieldIndexer` makes for `fields`: presence (slot 9), value (slot 0)
    /// and, for the string, its search tokens (slot 2).
    static let indexRows: [(field: String, slot: Int64, value: SQLiteValue)] = [
        ("title", 9, .null), ("title", 0, .text("Bench note")), ("title", 2, .text("bench")), ("title", 2, .text("note")),
        ("stars", 9, .null), ("stars", 0, .integer(5)),
    ]

    /// The fields blob exactly as `putRecord` stores it: keys sorted, CloudKit field JSON.
    static var fieldsBlob: [UInt8] {
        var object = JSONObject()
        for name in fields.keys.sorted() { object[name] = FieldCodec.encodeField(fields[name]!) }
        return JSONWriter.bytes(.object(object))
    }

    static func measure(synchronous: SQLiteSynchronous, seconds: Double) throws -> Result {
        let directory = try BenchPaths.temporaryDirectory("sqlite-\(synchronous.rawValue.lowercased())")
        defer { BenchPaths.remove(directory) }
        let owner = "_" + String(repeating: "0", count: 32)
        let zoneKey = try prepareStore(directory: directory, owner: owner)

        let connection = try SQLiteConnection(path: directory + "/tandem.sqlite")
        defer { connection.close() }
        try connection.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        let blob = fieldsBlob
        let clock = ContinuousClock()
        let cpuStart = ProcessCPU.currentThread
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            try insertOne(connection, zoneKey: zoneKey, name: "raw-\(count)", owner: owner, blob: blob)
            count += 1
        }
        let elapsed = (clock.now - start) / .seconds(1)
        let cpu = ProcessCPU.currentThread - cpuStart
        let stored = try connection.queryOne("SELECT count(*) FROM records", []) { $0.int64(0) } ?? 0
        guard stored == Int64(count) else {
            throw BenchError("the SQLite loop committed \(count) records but the file holds \(stored)")
        }
        return Result(synchronous: synchronous, records: count, seconds: elapsed, cpuSeconds: cpu)
    }

    /// A fresh store with a container and the owner's default zone; returns the zone's key.
    private static func prepareStore(directory: String, owner: String) throws -> Int64 {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        _ = try Admin.createContainer(BenchAccount.container, store: store)
        let scope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: owner)
        let now = Clock.milliseconds()
        return try store.write { try $0.ensureZone(scope, name: ZoneID.defaultZoneName, at: now).key }
    }

    /// One record, one transaction: what the server's writer does for a lone create.
    private static func insertOne(_ db: SQLiteConnection, zoneKey: Int64, name: String, owner: String, blob: [UInt8]) throws {
        try db.run("BEGIN IMMEDIATE")
        do {
            guard let sequence = try db.queryOne("UPDATE zones SET change_seq = change_seq + 1 WHERE id = ? RETURNING change_seq",
                                                 [.integer(zoneKey)], { $0.int64(0) }) else {
                throw BenchError("the zone vanished")
            }
            let existing = try db.queryOne("SELECT id FROM records WHERE zone_id = ? AND name = ?",
                                           [.integer(zoneKey), .text(name)]) { $0.int64(0) }
            guard existing == nil else { throw BenchError("record \(name) already exists") }
            let now = Clock.milliseconds()
            try db.run("""
                INSERT INTO records (type, change_tag, change_seq, fields, created_at, created_by, created_device,
                modified_at, modified_by, modified_device, parent, share, zone_id, name) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text("Note"), .text(String(sequence, radix: 36)), .integer(sequence), .blob(blob),
                      .integer(now), .text(owner), .text(""), .integer(now), .text(owner), .text(""), .null, .null,
                      .integer(zoneKey), .text(name)])
            let recordID = db.lastInsertRowID
            for row in indexRows {
                try db.run("INSERT INTO field_index (record_id, zone_id, type, field, slot, value) VALUES (?, ?, ?, ?, ?, ?)",
                           [.integer(recordID), .integer(zoneKey), .text("Note"), .text(row.field), .integer(row.slot), row.value])
            }
            try db.run("INSERT INTO changes (zone_id, seq, record_name, record_type, deleted, changed_at) VALUES (?, ?, ?, ?, ?, ?)",
                       [.integer(zoneKey), .integer(sequence), .text(name), .text("Note"), .integer(0), .integer(now)])
            try db.run("COMMIT")
        } catch {
            try? db.run("ROLLBACK")
            throw error
        }
    }
}
