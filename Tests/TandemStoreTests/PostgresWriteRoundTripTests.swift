import Testing
import TandemCore
import TandemStore
@testable import TandemPostgres
@testable import TandemStorePostgres

/// How many answers a record's save waits for on PostgreSQL (decisions P73): the upsert of the
/// record is one, its index, search, reference and change-log rows go with the next statement
/// (P64), and so does the zone's feed tick when its viewers stay. A one-record write waits three
/// times in all (P75): its first read, which takes the change sequence; the upsert; the COMMIT.
@Suite struct PostgresWriteRoundTripTests {
    @Test func aSaveWaitsOnceAndTheFeedTickNotAtAll() throws {
        try Fixture.withSchema(.postgres, indexing: [IndexedField(recordType: "Note", field: "title", options: [.queryable, .searchable])]) { store, fixture in
            let indexing: [String: IndexOptions] = ["title": [.queryable, .searchable]]
            let start = try store.read { try $0.feedClock() }.sequence
            let waits = try store.write { tx in
                let db = (tx as! PostgresStoreTransaction).db
                var waits: [Int] = []
                for (name, title, tag) in [("warm", "warm up", "t1"), ("a", "first words", "t1"), ("a", "second words", "t2"), ("b", "other", "t1")] {
                    let sequence = try tx.nextChangeSequence(fixture.zone)
                    let before = db.roundTrips
                    try tx.putRecord(fixture.record(name, fields: ["title": .string(title)], tag: tag), zone: fixture.zone,
                                     sequence: sequence, membership: nil, indexing: indexing)
                    waits.append(db.roundTrips - before)
                }
                let before = db.roundTrips
                try tx.zoneActivity(fixture.zone, container: Fixture.container, environment: .development, viewersChanged: false, at: 3_000)
                waits.append(db.roundTrips - before)
                return waits
            }
            // The first save also prepares its statement (one round trip more); then one each.
            #expect(waits.dropFirst() == [1, 1, 1, 0])
            try store.read { reader throws -> Void in
                // The update replaced the first save's index and search rows; the tick moved the zone in the feeds.
                let cases: [(Comparator, String, [String])] = [(.equals, "first words", []), (.equals, "second words", ["a"]),
                                                               (.containsAllTokens, "first", []), (.containsAllTokens, "words", ["a"])]
                for (comparator, value, expected) in cases {
                    let query = Query(recordType: "Note", filters: [Filter(comparator: comparator, field: .user("title"), value: .string(value))])
                    let found = try reader.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: nil)
                    #expect(found.map(\.record.recordName) == expected, "\(comparator) \(value)")
                }
                #expect(try reader.record(zone: fixture.zone, name: "a")?.recordChangeTag == "t2")
                let owner = FeedOwner(viewer: fixture.owner.recordName, container: Fixture.container, environment: .development, scope: .private)
                #expect(try reader.databaseChanges(owner, after: start, limit: 10).map(\.zoneID) == [fixture.zone.zoneID])
            }
        }
    }

    @Test func aOneRecordWriteWaitsForItsFirstReadItsUpsertAndItsCommitOrLess() throws {
        try Fixture.withSchema(.postgres, indexing: [IndexedField(recordType: "Note", field: "title", options: [.queryable, .searchable])]) { store, fixture in
            nonisolated(unsafe) var connection: PostgresConnection?
            var waits: [Int] = []
            let steps: [(name: String, title: String, toldTheRow: Bool)] = [
                ("warm", "warm up", false), ("a", "first words", false), ("a", "second words", false),
                ("warm-2", "warm up", true), ("b", "first words", true), ("b", "second words", true),
            ]
            for (name, title, toldTheRow) in steps {
                let start = try store.write { tx in
                    let db = (tx as! PostgresStoreTransaction).db
                    connection = db
                    let start = db.roundTrips
                    let read = try #require(try tx.zoneRecordAndSchemaETagReservingSequence(fixture.scope, zoneName: fixture.zone.zoneID.zoneName,
                                                                                          recordName: name))
                    let sequence = try tx.nextChangeSequence(read.zone)
                    var record = fixture.record(name, fields: ["title": .string(title)])
                    record.recordChangeTag = "t\(sequence)"
                    try tx.putRecord(record, zone: read.zone, sequence: sequence, membership: nil,
                                     indexing: ["title": [.queryable, .searchable]], before: toldTheRow ? read.before : nil)
                    try tx.zoneActivity(read.zone, container: Fixture.container, environment: .development, viewersChanged: false, at: 3_000)
                    return start
                }
                waits.append(try #require(connection).roundTrips - start)
            }
            // The first write of each kind also prepares its statements (round trips more); then
            // three each, and two when the save is told the row before (P76).
            #expect(Array(waits[1...2]) == [3, 3])
            #expect(Array(waits[4...5]) == [2, 2])
            let zone = try #require(try store.read { try $0.zone(fixture.scope, name: fixture.zone.zoneID.zoneName) })
            for name in ["a", "b"] {
                let saved = try #require(try store.read { try $0.record(zone: fixture.zone, name: name) })
                #expect(saved.fields["title"] == .string("second words"))
                let query = Query(recordType: "Note", filters: [Filter(comparator: .containsAllTokens, field: .user("title"), value: .string("second"))])
                #expect(try store.read { try $0.query(query, zones: [zone], limit: 10, after: nil, memberships: nil) }.map(\.record.recordName) == ["a", "b"])
            }
            #expect(try store.read { try $0.record(zone: fixture.zone, name: "b") }?.recordChangeTag == "t\(zone.changeSequence)")
        }
    }

    /// A lone write's deferred statements go with its COMMIT (P75): one that fails there rolls
    /// the write back, is thrown, and leaves the connection usable.
    @Test func aDeferredStatementThatFailsAtCommitRollsTheWriteBack() throws {
        try Fixture.withSchema(.postgres, indexing: []) { store, fixture in
            #expect(throws: (any Error).self) {
                try store.write { tx in
                    try tx.save(fixture.record("lost"), in: fixture.zone)
                    try (tx as! PostgresStoreTransaction).db.runDeferred("SELECT 1 / 0")
                }
            }
            try store.write { tx in try tx.save(fixture.record("kept"), in: fixture.zone) }
            try store.read { reader throws -> Void in
                #expect(try reader.record(zone: fixture.zone, name: "lost") == nil)
                #expect(try reader.record(zone: fixture.zone, name: "kept") != nil)
            }
        }
    }
}
