import Foundation
import Testing
import TandemCore
import TandemServer
@testable import TandemStore
@testable import TandemSQLite
@testable import TandemStoreSQLite

/// The indexes follow the schema's options, and queries on marked fields are answered from
/// them: checked with `EXPLAIN QUERY PLAN` on the SQL the query planner writes.
@Suite final class IndexPlanTests {
    let directory = NSTemporaryDirectory() + "tandem-plan-" + UUID().uuidString
    let store: SQLiteStore
    let container = "iCloud.com.example.plans"
    let zone: StoredZone

    init() throws {
        store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        _ = try Admin.createContainer(container, store: store)
        _ = try SchemaService(store: store).importSchema(SchemaEnvironmentTests.schema, file: "plan.ckdb", container: container,
                                                         environment: .development)
        let scope = DatabaseScope(container: container, environment: .development, database: .private, owner: "_owner")
        zone = try store.write { try $0.ensureZone(scope, name: "Plans", at: 1) }
        let zone = self.zone
        try store.write { tx in
            for i in 0..<200 {
                let sequence = try tx.nextChangeSequence(zone)
                let stamp = Record.Stamp(timestamp: Int64(i), userRecordName: "_owner")
                let fields: [String: FieldValue] = ["title": .string("Note \(i) about \(i % 2 == 0 ? "apples" : "pears")"),
                                                    "stars": .int64(Int64(i % 5)), "body": .string("body \(i)"),
                                                    "tags": .list([.string("t\(i % 3)")], of: .string)]
                try tx.putRecord(Record(recordName: "n\(i)", recordType: "Note", recordChangeTag: "t", fields: fields, zoneID: zone.zoneID,
                                        created: stamp, modified: stamp), zone: zone, sequence: sequence, membership: nil)
            }
        }
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The plan's detail lines, and the records the query returns.
    func run(_ query: Query) throws -> (plan: [String], names: [String]) {
        let zone = self.zone
        return try store.database.read { connection in
            let ordered = try SQLiteStoreTransaction(connection).orderedFields(zoneKey: zone.key, recordType: query.recordType)
            let planner = try QueryPlanner(query: query, zoneKeys: [zone.key], limit: 5, orderedFields: ordered)
            let plan = try connection.query("EXPLAIN QUERY PLAN " + planner.sql, planner.arguments) { $0.text(3) }
            let names = try connection.query(planner.sql, planner.arguments) { $0.text(0) }
            return (plan, names)
        }
    }

    @Test func sortOnASortableFieldWalksItsExpressionIndex() throws {
        let result = try run(Query(recordType: "Note", sorts: [Sort(field: .user("stars"))]))
        #expect(result.plan.contains { $0.contains("USING INDEX sort_") }, "\(result.plan)")
        #expect(!result.plan.contains { $0.contains("TEMP B-TREE") }, "no sort step: \(result.plan)")
        #expect(result.names == ["n0", "n5", "n10", "n15", "n20"])
    }

    /// Issue 14 item 6: the page after a marker starts with an index range at the cursor, not by
    /// walking the index (or an OFFSET) up to it, so a deep page costs what the first does.
    @Test(arguments: [("record order", [Sort]()), ("sortable field", [Sort(field: .user("stars"))])])
    func aPageAfterACursorSeeksItsIndex(label: String, sorts: [Sort]) throws {
        let query = Query(recordType: "Note", sorts: sorts)
        let zone = self.zone
        let first = try store.read { try $0.query(query, zones: [zone], limit: 5, after: nil, memberships: nil) }
        let cursor = try #require(first.last?.cursor)
        let (plan, next) = try store.database.read { connection in
            let ordered = try SQLiteStoreTransaction(connection).orderedFields(zoneKey: zone.key, recordType: query.recordType)
            let planner = try QueryPlanner(query: query, zoneKeys: [zone.key], limit: 5, after: cursor, orderedFields: ordered)
            return (try connection.query("EXPLAIN QUERY PLAN " + planner.sql, planner.arguments) { $0.text(3) },
                    try connection.query(planner.sql, planner.arguments) { $0.text(0) })
        }
        let seek = sorts.isEmpty ? "AND id>?)" : ">?)"
        #expect(plan.contains { $0.hasPrefix("SEARCH r USING") && $0.contains(seek) }, "\(label): \(plan)")
        #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(label): \(plan)")
        #expect(next == (sorts.isEmpty ? ["n5", "n6", "n7", "n8", "n9"] : ["n25", "n30", "n35", "n40", "n45"]))
    }

    @Test func equalityOnAQueryableFieldUsesTheFieldIndex() throws {
        let result = try run(Query(recordType: "Note", filters: [Filter(comparator: .equals, field: .user("stars"), value: .int64(3))]))
        #expect(result.plan.contains { $0.contains("field_index_lookup") }, "\(result.plan)")
        #expect(result.names == ["n3", "n8", "n13", "n18", "n23"])
    }

    @Test func tokensOfASearchableFieldUseTheFullTextIndex() throws {
        let result = try run(Query(recordType: "Note", filters: [Filter(comparator: .containsAllTokens, field: .user("title"), value: .string("PEARS note"))]))
        #expect(result.plan.contains { $0.contains("VIRTUAL TABLE INDEX") }, "\(result.plan)")
        #expect(result.names == ["n1", "n3", "n5", "n7", "n9"])
    }

    @Test func unmarkedFieldsHaveNoIndexEntries() throws {
        let counts = try store.database.read { connection in
            try connection.query("SELECT field, count(*) FROM field_index GROUP BY field ORDER BY field") { "\($0.text(0))=\($0.int64(1))" }
        }
        // title, stars and tags (a queryable list of one) one value row each, and no presence
        // row beside a value row (decisions E31); never body.
        #expect(counts == ["stars=200", "tags=200", "title=200"])
    }

    /// A negated comparator asks for records that have the field: a value row says so, and the
    /// presence marker only for a field without one (E31). Records saved before kept a marker
    /// beside every value row; such rows answer the same.
    @Test func negatedComparatorsFindTheFieldByItsValueRowsAndOldMarkersChangeNothing() throws {
        let notFour = Query(recordType: "Note", filters: [Filter(comparator: .notEquals, field: .user("stars"), value: .int64(4))])
        let notListed = Query(recordType: "Note", filters: [Filter(comparator: .notListContains, field: .user("tags"), value: .string("t0"))])
        let fresh = (try run(notFour), try run(notListed))
        #expect(fresh.0.names == ["n0", "n1", "n2", "n3", "n5"])
        #expect(fresh.1.names == ["n1", "n2", "n4", "n5", "n7"])
        #expect(fresh.0.plan.contains { $0.contains("field_index_lookup") }, "\(fresh.0.plan)")
        // As a store written before E31 holds them: a marker beside each value row.
        try store.database.write { connection in
            try connection.run("INSERT INTO field_index (record_id, zone_id, type, field, slot, value) "
                               + "SELECT record_id, zone_id, type, field, 9, NULL FROM field_index WHERE slot = 0")
        }
        #expect(try run(notFour).names == fresh.0.names)
        #expect(try run(notListed).names == fresh.1.names)
    }

    /// Review 50: making a field SEARCHABLE while one record's text was over the full-text limit
    /// failed the import after the schema was saved, and no record was indexed. Now the import
    /// goes through, every other record is indexed, and the one over the limit is named (P80).
    @Test func aRecordOverTheFullTextLimitIsNamedAndTheRestIndexed() throws {
        let zone = self.zone
        let words = (0..<60_000).map { String(format: "%06x", $0) }.joined(separator: " ")
        try store.write { tx in
            let stamp = Record.Stamp(timestamp: 1, userRecordName: "_owner")
            try tx.putRecord(Record(recordName: "huge", recordType: "Note", recordChangeTag: "t", fields: ["body": .string(words)],
                                    zoneID: zone.zoneID, created: stamp, modified: stamp),
                             zone: zone, sequence: try tx.nextChangeSequence(zone), membership: nil)
        }
        let changed = SchemaEnvironmentTests.schema
            .replacingOccurrences(of: "body          STRING,", with: "body          STRING QUERYABLE SEARCHABLE,")
        var service = SchemaService(store: store)
        service.rebuildBatch = 64
        let outcome = try service.importSchema(changed, file: "changed.ckdb", container: container, environment: .development)
        #expect(outcome.reindexed == ["Note": 201])
        #expect(outcome.unsearchable == ["Note": ["huge"]])
        let search = try run(Query(recordType: "Note", filters: [Filter(comparator: .containsAnyTokens, field: .user("body"), value: .string("7 8"))]))
        #expect(search.names == ["n7", "n8"])
        let huge = try run(Query(recordType: "Note", filters: [Filter(comparator: .equals, field: .user("body"), value: .string(words))]))
        #expect(huge.names == ["huge"], "its other index entries are written")
        let again = try service.importSchema(changed, file: "changed.ckdb", container: container, environment: .development)
        #expect(again.changes.isEmpty)
    }

    @Test func changingOptionsAtImportBuildsAndDropsIndexes() throws {
        // body becomes queryable and searchable, stars loses SORTABLE, title loses SEARCHABLE.
        let changed = SchemaEnvironmentTests.schema
            .replacingOccurrences(of: "body          STRING,", with: "body          STRING QUERYABLE SEARCHABLE,")
            .replacingOccurrences(of: "stars         INT64 QUERYABLE SORTABLE", with: "stars         INT64 QUERYABLE")
            .replacingOccurrences(of: "title         STRING QUERYABLE SEARCHABLE SORTABLE", with: "title         STRING QUERYABLE SORTABLE")
        var service = SchemaService(store: store)
        service.rebuildBatch = 64
        let outcome = try service.importSchema(changed, file: "changed.ckdb", container: container, environment: .development)
        #expect(outcome.reindexed == ["Note": 200])
        let indexes = try store.database.read { connection in
            try connection.query("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'sort_%'") { $0.text(0) }
        }
        #expect(indexes.count == 1, "only title's sort index is left: \(indexes)")
        let body = try run(Query(recordType: "Note", filters: [Filter(comparator: .equals, field: .user("body"), value: .string("body 7"))]))
        #expect(body.names == ["n7"])
        let search = try run(Query(recordType: "Note", filters: [Filter(comparator: .containsAnyTokens, field: .user("body"), value: .string("7 8"))]))
        #expect(search.names == ["n7", "n8"])
        let title = try run(Query(recordType: "Note", filters: [Filter(comparator: .containsAnyTokens, field: .user("title"), value: .string("pears"))]))
        #expect(title.names.isEmpty, "title is no longer in the full-text index")
    }
}
