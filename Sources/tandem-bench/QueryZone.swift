import Foundation
import TandemCore
import TandemSQLite
import TandemStore
import TandemStoreSQLite

/// The data directory of the query benchmark: one custom zone holding `count` records of type
/// `Item`, each with `bucket` = i % 1000 (INT64; an equality matches count/1000 records) and a
/// short `title` STRING.
///
/// Built once through `SQLiteStore.write` (10,000 `putRecord`s per transaction, the same rows
/// `records/modify` writes) and kept under `.build/bench-data/`, keyed by the store's schema
/// version and this layout's version, so later runs reuse it. A directory only counts once
/// its population finished (a marker file is written last).
enum QueryZone {
    static let zoneName = "Bench"
    static let recordType = "Item"
    static let buckets = 1000
    /// Bump when the records written below, or the index rows the store writes for them, change
    /// (2: no presence row beside a value row, decisions E31).
    static let layoutVersion = 2
    static let recordsPerTransaction = 10_000
    /// On PostgreSQL: every `nextChangeSequence` in a transaction adds a version of the zone's
    /// row that the next one must step over, so a transaction's cost grows with its square.
    static let postgresRecordsPerTransaction = 200
    private static let completeMarker = "bench-population-complete"

    struct Prepared {
        var directory: String
        /// Seconds spent populating in this run; nil when the cached directory was reused.
        var populationSeconds: Double?
    }

    static func prepare(records count: Int, progress: (String) -> Void) throws -> Prepared {
        let key = "query-zone-schema\(try schemaVersion())-layout\(layoutVersion)-\(count)"
        let directory = BenchPaths.cacheRoot + "/" + key
        if FileManager.default.fileExists(atPath: directory + "/" + completeMarker) {
            return Prepared(directory: directory, populationSeconds: nil)
        }
        BenchPaths.remove(directory)
        let partial = directory + ".partial-\(getpid())"
        BenchPaths.remove(partial)
        let start = ContinuousClock.now
        try populate(partial, records: count, progress: progress)
        _ = FileManager.default.createFile(atPath: partial + "/" + completeMarker, contents: Data("\(count)\n".utf8))
        try FileManager.default.moveItem(atPath: partial, toPath: directory)
        return Prepared(directory: directory, populationSeconds: (ContinuousClock.now - start) / .seconds(1))
    }

    /// `PRAGMA user_version` of a freshly migrated store: changes whenever a migration is added.
    private static func schemaVersion() throws -> Int64 {
        let directory = try BenchPaths.temporaryDirectory("schema")
        defer { BenchPaths.remove(directory) }
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        return try store.database.read { try $0.queryOne("PRAGMA user_version", []) { $0.int64(0) } } ?? 0
    }

    private static func populate(_ directory: String, records count: Int, progress: (String) -> Void) throws {
        let store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        defer { store.close() }
        let account = try BenchAccount.prepare(store: store)
        try populate(store, owner: account.userRecordName, records: count, perTransaction: recordsPerTransaction, progress: progress)
    }

    /// Writes the zone into `store` for the bench user `owner`: the same records whichever the store.
    static func populate(_ store: any Store, owner: String, records count: Int, perTransaction: Int,
                         progress: (String) -> Void) throws {
        let scope = DatabaseScope(container: BenchAccount.container, environment: .development, database: .private, owner: owner)
        let start = Clock.milliseconds()
        let zone = try store.write { try $0.ensureZone(scope, name: zoneName, at: start) }
        let clock = ContinuousClock()
        let began = clock.now
        var written = 0
        while written < count {
            let first = written
            let last = min(count, first + perTransaction)
            try store.write { tx in
                for i in first..<last {
                    let sequence = try tx.nextChangeSequence(zone)
                    let stamp = Record.Stamp(timestamp: start + Int64(i), userRecordName: owner)
                    let record = Record(recordName: "item-\(i)", recordType: recordType,
                                        recordChangeTag: String(sequence, radix: 36),
                                        fields: ["bucket": .int64(Int64(i % buckets)), "title": .string("Item \(i)")],
                                        zoneID: zone.zoneID, created: stamp, modified: stamp)
                    try tx.putRecord(record, zone: zone, sequence: sequence, membership: nil)
                }
            }
            written = last
            if written % 100_000 == 0 || written == count {
                let seconds = (clock.now - began) / .seconds(1)
                progress("  populated \(Format.count(written))/\(Format.count(count)) records in \(Format.seconds(seconds))")
            }
        }
    }
}
