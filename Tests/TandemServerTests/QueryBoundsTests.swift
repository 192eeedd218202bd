import Foundation
import Testing
import TandemCore
import TandemServer
@testable import TandemStore
@testable import TandemSQLite
@testable import TandemStoreSQLite

/// Issue 14: what a client sends in a query must not shape the SQL the server prepares (item 1),
/// and paging is keyset paging, stable in every order the planner writes (item 6). Run on a real
/// SQLite store with one reader, so every query goes through the same statement cache.
@Suite final class QueryBoundsTests {
    let directory = NSTemporaryDirectory() + "tandem-bounds-" + UUID().uuidString
    let store: SQLiteStore
    let container = "iCloud.com.example.bounds"
    let zone: StoredZone
    static let count = 40

    init() throws {
        store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        _ = try Admin.createContainer(container, store: store)
        _ = try SchemaService(store: store).importSchema(SchemaEnvironmentTests.schema, file: "bounds.ckdb", container: container,
                                                         environment: .development)
        let scope = DatabaseScope(container: container, environment: .development, database: .private, owner: "_owner")
        zone = try store.write { try $0.ensureZone(scope, name: "Bounds", at: 1) }
        let zone = self.zone
        try store.write { tx in
            for i in 0..<Self.count {
                let sequence = try tx.nextChangeSequence(zone)
                let stamp = Record.Stamp(timestamp: Int64(1000 - i % 7), userRecordName: "_owner")
                var fields: [String: FieldValue] = ["title": .string("Note \(i % 9)"), "body": .string("body \(i)"),
                                                    "tags": .list([.string("t\(i % 3)")], of: .string)]
                // Every fifth record has no stars: NULL sort keys, first ascending and last descending.
                if i % 5 != 0 { fields["stars"] = .int64(Int64(i % 4)) }
                try tx.putRecord(Record(recordName: String(format: "n%02d", i), recordType: "Note", recordChangeTag: "t", fields: fields,
                                        zoneID: zone.zoneID, created: stamp, modified: stamp), zone: zone, sequence: sequence, membership: nil)
            }
        }
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func page(_ query: Query, limit: Int, after: QueryCursor?) throws -> [(record: Record, cursor: QueryCursor)] {
        let zone = self.zone
        return try store.read { try $0.query(query, zones: [zone], limit: limit, after: after, memberships: nil) }
    }

    func names(_ query: Query) throws -> [String] { try page(query, limit: 200, after: nil).map(\.record.recordName) }

    var cachedStatements: Int { (try? store.database.read { $0.cachedStatementCount }) ?? -1 }

    // MARK: Item 1: value lists bind as one value

    @Test func inListsOfAnyLengthShareOneStatement() throws {
        _ = try names(Query(recordType: "Note"))
        let before = cachedStatements
        for length in 1...300 {
            let numbers = (0..<length).map { FieldValue.int64(Int64($0 + 2)) }
            let byStars = try names(Query(recordType: "Note", filters: [Filter(comparator: .in, field: .user("stars"), value: .list(numbers, of: .int64))]))
            #expect(byStars.count == (length == 1 ? 8 : 16), "stars 2 and 3 match once the list holds them")
            let texts = (0..<length).map { FieldValue.string("Note \($0 + 10)") }
            _ = try names(Query(recordType: "Note", filters: [Filter(comparator: .notIn, field: .user("title"), value: .list(texts, of: .string))]))
            let recordNames = (0..<length).map { FieldValue.string(String(format: "n%02d", $0)) }
            let byName = try names(Query(recordType: "Note", filters: [Filter(comparator: .in, field: .system(.recordName), value: .list(recordNames, of: .string))]))
            #expect(byName.count == min(length, Self.count))
        }
        // Three query shapes; on the old planner each of the 900 lists was a statement of its own.
        #expect(cachedStatements - before <= 6, "\(cachedStatements - before) statements for 900 lists of 300 lengths")
    }

    @Test func listsJSONCannotCarryExactlyUseABoundedSetOfShapes() throws {
        var texts = Set<String>()
        for length in 1...Limits.valuesPerFilter {
            let doubles = (0..<length).map { FieldValue.double(Double($0) + 0.1) }
            let planner = try QueryPlanner(query: Query(recordType: "Note", filters: [Filter(comparator: .in, field: .user("stars"), value: .list(doubles, of: .double))]),
                                           zoneKeys: [zone.key], limit: 10)
            texts.insert(planner.sql)
        }
        #expect(texts.count <= 11, "one shape per power of two up to \(Limits.valuesPerFilter): \(texts.count)")
    }

    @Test(arguments: [2, 3, 17, 64])
    func zoneListsAndSortLocationsAreBoundNotWritten(zones: Int) throws {
        let zoneWide = try QueryPlanner(query: Query(recordType: "Note"), zoneKeys: Array(1...Int64(zones)), limit: 10,
                                        memberships: (0..<zones).map { "share-\($0)" })
        let reference = try QueryPlanner(query: Query(recordType: "Note"), zoneKeys: [1, 2], limit: 7, memberships: ["a"])
        #expect(zoneWide.sql == reference.sql)
        let near = Query(recordType: "Note", filters: [Filter(comparator: .near, field: .user("place"), value: .location(Location(latitude: Double(zones), longitude: 2)), distance: 10)],
                         sorts: [Sort(field: .user("place"), relativeLocation: Location(latitude: 1, longitude: Double(zones)))])
        let other = Query(recordType: "Note", filters: [Filter(comparator: .near, field: .user("place"), value: .location(Location(latitude: 5, longitude: 6)), distance: 99)],
                          sorts: [Sort(field: .user("other"), relativeLocation: Location(latitude: 7, longitude: 8))])
        #expect(try QueryPlanner(query: near, zoneKeys: [zone.key], limit: 10).sql == QueryPlanner(query: other, zoneKeys: [zone.key + 1], limit: 20).sql)
    }

    // MARK: Item 6: keyset paging

    static let orders: [(String, [Sort])] = [
        ("record order", []),
        ("indexed field ascending (NULLs first)", [Sort(field: .user("stars"))]),
        ("indexed field descending (NULLs last)", [Sort(field: .user("stars"), ascending: false)]),
        ("unindexed field, then another descending", [Sort(field: .user("tags")), Sort(field: .user("title"), ascending: false)]),
        ("system field descending", [Sort(field: .system(.modifiedTimestamp), ascending: false)]),
        ("record name descending", [Sort(field: .system(.recordName), ascending: false)]),
        ("three keys with NULLs in the middle", [Sort(field: .user("title")), Sort(field: .user("stars"), ascending: false), Sort(field: .system(.createdTimestamp))]),
    ]

    @Test(arguments: orders.map(\.0))
    func pagingInEveryOrderReturnsEachRecordOnceInOrder(label: String) throws {
        let sorts = Self.orders.first { $0.0 == label }!.1
        for filters in [[], [Filter(comparator: .equals, field: .user("tags"), value: .string("t1"))]] {
            let query = Query(recordType: "Note", filters: filters, sorts: sorts)
            let whole = try names(query)
            for size in [1, 3, 7] {
                var paged: [String] = []
                var cursor: QueryCursor?
                repeat {
                    let rows = try page(query, limit: size, after: cursor)
                    paged += rows.map(\.record.recordName)
                    cursor = rows.count == size ? rows.last?.cursor : nil
                } while cursor != nil && paged.count <= Self.count
                #expect(paged == whole, "\(label), pages of \(size), \(filters.count) filters")
            }
        }
    }

    @Test func cursorBytesRoundTrip() {
        let cursor = QueryCursor(keys: [.null, .integer(-7), .real(0.1 + 0.2), .text("é\u{0}x"), .bytes([0, 255])], recordKey: 42)
        #expect(QueryCursor(bytes: cursor.bytes) == cursor)
        #expect(QueryCursor(bytes: Array(cursor.bytes.dropLast())) == nil)
        #expect(QueryCursor(bytes: cursor.bytes + [0]) == nil)
    }
}
