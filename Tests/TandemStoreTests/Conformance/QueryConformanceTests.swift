import Testing
import TandemCore
import TandemStore

/// Queries through `any Store` (decisions P5): every comparator on user and system fields, every
/// sort, full-text search, share memberships and keyset paging. One table row per rule.
@Suite struct QueryConformanceTests {
    /// Five `Item` records; `r5` holds a STRING in the INT64 field `n`, which range comparators
    /// must not match (they stay within the value's type), and has no `tags`, `x` or `loc`.
    static func items(_ fixture: Fixture) -> [Record] {
        let berlin = Location(latitude: 52.52, longitude: 13.405)
        let paris = Location(latitude: 48.8566, longitude: 2.3522)
        func item(_ index: Int, _ fields: [String: FieldValue]) -> Record {
            fixture.record("r\(index)", type: "Item", fields: fields, at: Int64(index) * 1_000)
        }
        return [
            item(1, ["name": .string("apple pie"), "n": .int64(1), "x": .double(1.5), "t": .timestamp(100),
                     "tags": .list([.string("red"), .string("green")], of: .string), "loc": .location(berlin)]),
            item(2, ["name": .string("banana split"), "n": .int64(5), "x": .double(2.5), "t": .timestamp(200),
                     "tags": .list([.string("yellow")], of: .string), "loc": .location(paris)]),
            item(3, ["name": .string("cherry tart"), "n": .int64(10), "t": .timestamp(300), "tags": .list([.string("red")], of: .string)]),
            item(4, ["name": .string("Apple crumble"), "n": .int64(7), "t": .timestamp(400), "tags": .list([], of: .string)]),
            item(5, ["name": .string("date loaf"), "n": .string("9")]),
        ]
    }

    /// What the store indexes for `Item`: `name` is searchable too.
    static let indexed: [IndexedField] = [
        IndexedField(recordType: "Item", field: "name", options: [.queryable, .sortable, .searchable], ordered: true),
        IndexedField(recordType: "Item", field: "n", options: [.queryable, .sortable], ordered: true),
        IndexedField(recordType: "Item", field: "x", options: [.queryable, .sortable]),
        IndexedField(recordType: "Item", field: "t", options: [.queryable, .sortable], ordered: true),
        IndexedField(recordType: "Item", field: "tags", options: [.queryable]),
        IndexedField(recordType: "Item", field: "loc", options: [.queryable, .sortable]),
    ]

    /// A store holding `items` under the `indexed` schema.
    static func withItems(_ backend: StoreBackend, _ body: (any Store, Fixture) throws -> Void) throws {
        try Fixture.withSchema(backend, indexing: indexed, records: items, body)
    }

    struct Case: Sendable, CustomTestStringConvertible {
        var filter: Filter
        var expected: Set<String>
        var testDescription: String { "\(filter.comparator.rawValue) \(filter.field)" }

        init(_ comparator: Comparator, _ field: String, _ value: FieldValue, _ expected: Set<String>, distance: Double? = nil) {
            self.filter = Filter(comparator: comparator, field: .user(field), value: value, distance: distance)
            self.expected = expected
        }

        init(_ comparator: Comparator, system: SystemField, _ value: FieldValue, _ expected: Set<String>) {
            self.filter = Filter(comparator: comparator, field: .system(system), value: value)
            self.expected = expected
        }
    }

    static func strings(_ values: String...) -> FieldValue { .list(values.map { .string($0) }, of: .string) }

    static let cases: [Case] = [
        Case(.equals, "n", .int64(5), ["r2"]),
        Case(.equals, "name", .string("cherry tart"), ["r3"]),
        Case(.equals, "t", .timestamp(200), ["r2"]),
        Case(.notEquals, "n", .int64(5), ["r1", "r3", "r4", "r5"]),
        Case(.lessThan, "n", .int64(5), ["r1"]),
        Case(.lessThanOrEquals, "n", .int64(5), ["r1", "r2"]),
        Case(.greaterThan, "n", .int64(5), ["r3", "r4"]),
        Case(.greaterThanOrEquals, "n", .int64(5), ["r2", "r3", "r4"]),
        Case(.lessThan, "x", .double(2.0), ["r1"]),
        Case(.greaterThan, "t", .timestamp(250), ["r3", "r4"]),
        Case(.greaterThan, "name", .string("b"), ["r2", "r3", "r5"]),
        Case(.in, "n", .list([.int64(1), .int64(10)], of: .int64), ["r1", "r3"]),
        Case(.in, "n", .list([], of: .int64), []),
        Case(.notIn, "n", .list([.int64(1), .int64(10)], of: .int64), ["r2", "r4", "r5"]),
        Case(.listContains, "tags", .string("red"), ["r1", "r3"]),
        Case(.notListContains, "tags", .string("red"), ["r2", "r4"]),
        Case(.notListContainsAny, "tags", strings("red", "yellow"), ["r4"]),
        Case(.listContainsAll, "tags", strings("red", "green"), ["r1"]),
        Case(.notListContainsAll, "tags", strings("red", "green"), ["r2", "r3", "r4"]),
        Case(.beginsWith, "name", .string("apple"), ["r1"]),
        Case(.notBeginsWith, "name", .string("apple"), ["r2", "r3", "r4", "r5"]),
        Case(.listMemberBeginsWith, "tags", .string("gr"), ["r1"]),
        Case(.notListMemberBeginsWith, "tags", .string("r"), ["r2", "r4"]),
        Case(.containsAllTokens, "name", .string("APPLE, crumble!"), ["r4"]),
        Case(.containsAllTokens, "name", .string("apple tart"), []),
        Case(.containsAnyTokens, "name", .string("pie tart"), ["r1", "r3"]),
        Case(.near, "loc", .location(Location(latitude: 52.5, longitude: 13.4)), ["r1"], distance: 5_000),
        Case(.near, "loc", .location(Location(latitude: 50.7, longitude: 7.8)), ["r1", "r2"], distance: 600_000),
        Case(.equals, system: .recordName, .string("r2"), ["r2"]),
        Case(.in, system: .recordName, strings("r1", "r4", "absent"), ["r1", "r4"]),
        Case(.notIn, system: .recordName, strings("r1", "r4"), ["r2", "r3", "r5"]),
        Case(.greaterThan, system: .createdTimestamp, .timestamp(3_000), ["r4", "r5"]),
        Case(.lessThanOrEquals, system: .modifiedTimestamp, .timestamp(2_000), ["r1", "r2"]),
        Case(.beginsWith, system: .recordName, .string("r"), ["r1", "r2", "r3", "r4", "r5"]),
    ]

    @Test(arguments: StoreBackend.all(for: .queries), cases)
    func everyComparatorFindsWhatItSays(backend: StoreBackend, rule: Case) throws {
        try Self.withItems(backend) { store, fixture in
            let query = Query(recordType: "Item", filters: [rule.filter])
            let found = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(Set(found.map(\.record.recordName)) == rule.expected)
            #expect(found.count == rule.expected.count, "each record once")
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries))
    func filtersCombineAsAnd(backend: StoreBackend) throws {
        try Self.withItems(backend) { store, fixture in
            let query = Query(recordType: "Item", filters: [
                Filter(comparator: .listContains, field: .user("tags"), value: .string("red")),
                Filter(comparator: .greaterThan, field: .user("n"), value: .int64(2)),
            ])
            let found = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(found.map(\.record.recordName) == ["r3"])
        }
    }

    struct SortCase: Sendable, CustomTestStringConvertible {
        var sorts: [Sort]
        var filters: [Filter] = [Filter(comparator: .notEquals, field: .system(.recordName), value: .string("r5"))]
        var expected: [String]
        var testDescription: String { sorts.map { "\($0.field) \($0.ascending ? "asc" : "desc")" }.joined(separator: ", ") }
    }

    /// Sorts over r1–r4 (r5's STRING in `n` would mix types, which no rule orders).
    static let sortCases: [SortCase] = [
        SortCase(sorts: [Sort(field: .user("n"))], expected: ["r1", "r2", "r4", "r3"]),
        SortCase(sorts: [Sort(field: .user("n"), ascending: false)], expected: ["r3", "r4", "r2", "r1"]),
        SortCase(sorts: [Sort(field: .user("name"))], expected: ["r4", "r1", "r2", "r3"]),
        SortCase(sorts: [Sort(field: .user("t"), ascending: false)], expected: ["r4", "r3", "r2", "r1"]),
        SortCase(sorts: [Sort(field: .system(.createdTimestamp), ascending: false)], expected: ["r4", "r3", "r2", "r1"]),
        SortCase(sorts: [Sort(field: .system(.recordName))], expected: ["r1", "r2", "r3", "r4"]),
        SortCase(sorts: [Sort(field: .user("loc"), relativeLocation: Location(latitude: 48.8, longitude: 2.3))],
                 filters: [Filter(comparator: .in, field: .system(.recordName), value: strings("r1", "r2"))], expected: ["r2", "r1"]),
        SortCase(sorts: [Sort(field: .user("loc"), relativeLocation: Location(latitude: 52.5, longitude: 13.4))],
                 filters: [Filter(comparator: .in, field: .system(.recordName), value: strings("r1", "r2"))], expected: ["r1", "r2"]),
    ]

    @Test(arguments: StoreBackend.all(for: .queries), sortCases)
    func everySortOrdersAsItSays(backend: StoreBackend, rule: SortCase) throws {
        try Self.withItems(backend) { store, fixture in
            let query = Query(recordType: "Item", filters: rule.filters, sorts: rule.sorts)
            let found = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(found.map(\.record.recordName) == rule.expected)
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries))
    func tiesAndTwoKeySortsAreStable(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                for (name, group) in [("e", 2), ("a", 1), ("d", 2), ("b", 1), ("c", 2)] {
                    try tx.save(fixture.record(name, type: "Row", fields: ["group": .int64(Int64(group)), "label": .string(name)]), in: fixture.zone)
                }
            }
            let query = Query(recordType: "Row", sorts: [Sort(field: .user("group"), ascending: false), Sort(field: .user("label"))])
            let found = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(found.map(\.record.recordName) == ["c", "d", "e", "a", "b"])
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries))
    func pagesContinueAfterTheirCursorEvenWhenRecordsChangeBetween(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                for index in 0..<7 { try tx.save(fixture.record("p\(index)", type: "Page", fields: ["rank": .int64(Int64(index % 3))]), in: fixture.zone) }
            }
            let query = Query(recordType: "Page", sorts: [Sort(field: .user("rank"))])
            let all = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }.map(\.record.recordName)
            #expect(all.count == 7)
            var seen: [String] = []
            var cursor: QueryCursor?
            var pages = 0
            repeat {
                let page = try store.read { try $0.query(query, zones: [fixture.zone], limit: 3, after: cursor, memberships: nil) }
                seen += page.map(\.record.recordName)
                cursor = page.last?.cursor
                pages += 1
                if pages == 1 {
                    // A record sorting before the cursor is not returned later; none is skipped or repeated.
                    _ = try store.write { tx in try tx.save(fixture.record("early", type: "Page", fields: ["rank": .int64(-1)]), in: fixture.zone) }
                }
                if page.count < 3 { break }
            } while pages < 10
            #expect(seen == all)
            // A cursor survives its byte encoding (the server MACs it into a continuation marker).
            if let cursor = try store.read({ try $0.query(query, zones: [fixture.zone], limit: 2, after: nil, memberships: nil) }).last?.cursor {
                #expect(QueryCursor(bytes: cursor.bytes) == cursor)
            }
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries))
    func membershipsLimitWhatAParticipantSees(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                try tx.save(fixture.record("shared-a"), in: fixture.zone, membership: "share-a")
                try tx.save(fixture.record("shared-b"), in: fixture.zone, membership: "share-b")
                try tx.save(fixture.record("private"), in: fixture.zone)
            }
            let query = Query(recordType: "Note")
            let seen = try store.read { try $0.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: ["share-a"]) }
            #expect(seen.map(\.record.recordName) == ["shared-a"])
            let none = try store.read { try $0.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: []) }
            #expect(none.isEmpty)
            let owner = try store.read { try $0.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: nil) }
            #expect(Set(owner.map(\.record.recordName)) == ["shared-a", "shared-b", "private"])
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries))
    func aQueryOverTwoZonesFindsBoth(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            let second = try store.write { tx in try tx.ensureZone(fixture.scope, name: "second", at: 1_000) }
            try store.write { tx in
                try tx.save(fixture.record("one", fields: ["k": .int64(1)]), in: fixture.zone)
                var other = fixture.record("two", fields: ["k": .int64(1)])
                other.zoneID = second.zoneID
                try tx.save(other, in: second)
            }
            let query = Query(recordType: "Note", filters: [Filter(comparator: .equals, field: .user("k"), value: .int64(1))])
            let found = try store.read { try $0.query(query, zones: [fixture.zone, second], limit: 10, after: nil, memberships: nil) }
            #expect(Set(found.map(\.record.recordName)) == ["one", "two"])
            #expect(Set(found.map(\.record.zoneID.zoneName)) == ["notes", "second"])
        }
    }
}
