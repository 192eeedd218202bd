import Foundation
import TandemCore
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

/// Ceiling (b): the store alone doing, one transaction per record, the writes a lone create
/// makes — the zone's next change sequence, the existence check, `putRecord` (the records row,
/// its index rows, its change-log row) and the zone's feed activity — through the store's own
/// `StoreWriting` calls on its writer queue, with no HTTP, JSON, authentication or service logic.
///
/// It calls the store's code rather than carrying a copy of its SQL, so a migration that renames
/// a table changes the ceiling with it (a copy of the SQL broke once: `no such table: changes`).
/// The file is a fresh Tandem store (its own migrations, WAL) at the given `synchronous`.
enum SQLiteInsertCeiling {
    struct Result {
        var synchronous: SQLiteSynchronous
        var records: Int
        var seconds: Double
        /// CPU seconds the bench process used meanwhile (the writer thread runs SQLite; fsync
        /// waits are not CPU).
        var cpuSeconds: Double
        var recordsPerSecond: Double { Double(records) / seconds }
    }

    /// The fields the create benchmark sends: `{"title": "Bench note", "stars": 5}`.
    static let fields: [String: FieldValue] = ["title": .string("Bench note"), "stars": .int64(5)]

    static func measure(synchronous: SQLiteSynchronous, seconds: Double) throws -> Result {
        let directory = try BenchPaths.temporaryDirectory("sqlite-\(synchronous.rawValue.lowercased())")
        defer { BenchPaths.remove(directory) }
        let owner = "_" + String(repeating: "0", count: 32)
        let store = try SQLiteStore(directory: directory, synchronous: synchronous, readerCount: 1)
        defer { store.close() }
        _ = try Admin.createContainer(BenchAccount.container, store: store)
        let scope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: owner)
        let zone = try store.write { try $0.ensureZone(scope, name: ZoneID.defaultZoneName, at: Clock.milliseconds()) }

        let clock = ContinuousClock()
        let cpuStart = ProcessCPU.ownProcess
        let start = clock.now
        let deadline = start + .milliseconds(Int(seconds * 1000))
        var count = 0
        while clock.now < deadline {
            try insertOne(store, zone: zone, name: "raw-\(count)", owner: owner)
            count += 1
        }
        let elapsed = (clock.now - start) / .seconds(1)
        let cpu = ProcessCPU.ownProcess - cpuStart
        let last = "raw-\(count - 1)"
        guard count > 0, try store.read({ try $0.record(zone: zone, name: last) }) != nil else {
            throw BenchError("the store loop committed \(count) records but the zone does not hold them")
        }
        return Result(synchronous: synchronous, records: count, seconds: elapsed, cpuSeconds: cpu)
    }

    /// One record, one transaction: the store calls the server's writer makes for a lone create.
    private static func insertOne(_ store: SQLiteStore, zone: StoredZone, name: String, owner: String) throws {
        try store.write { tx in
            guard try tx.recordWithMembership(zone: zone, name: name) == nil else { throw BenchError("record \(name) already exists") }
            let sequence = try tx.nextChangeSequence(zone)
            let now = Clock.milliseconds()
            let stamp = Record.Stamp(timestamp: now, userRecordName: owner)
            let record = Record(recordName: name, recordType: "Note", recordChangeTag: String(sequence, radix: 36),
                                fields: fields, zoneID: zone.zoneID, created: stamp, modified: stamp)
            try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
            _ = try tx.zoneActivity(zone, container: BenchAccount.container, environment: .development, viewersChanged: false, at: now)
        }
    }
}
