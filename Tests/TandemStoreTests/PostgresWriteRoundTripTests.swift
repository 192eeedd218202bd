import Testing
import TandemCore
import TandemStore
@testable import TandemPostgres
@testable import TandemStorePostgres

/// How many answers a record's save waits for on PostgreSQL (decisions P73): the upsert of the
/// record is one, its index, search, reference and change-log rows go with the next statement
/// (P64), and so does the zone's feed tick when its viewers stay.
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
}
