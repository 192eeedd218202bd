import Testing
import TandemCore
import TandemStore

/// Strings holding U+0000 and U+0001 compare, sort, match prefixes and page as bytewise UTF-8 on
/// both stores (PostgreSQL's `text` cannot hold U+0000: decisions P50).
extension QueryConformanceTests {
    /// `Label` records `c0`…`c6`, their `label`s in ascending bytewise order.
    static let controlLabels = ["a", "a\u{0}", "a\u{0}b", "a\u{1}", "a\u{1}b", "a\u{2}", "ab"]

    static func withControlLabels(_ backend: StoreBackend, _ body: (any Store, Fixture) throws -> Void) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            try store.write { tx in
                // Saved out of order, so the sorts below cannot pass by insertion order.
                for index in [3, 0, 6, 2, 5, 1, 4] {
                    try tx.save(fixture.record("c\(index)", type: "Label", fields: ["label": .string(controlLabels[index])]), in: fixture.zone)
                }
            }
            try body(store, fixture)
        }
    }

    struct ControlCase: Sendable, CustomTestStringConvertible {
        var filter: Filter
        var expected: Set<String>
        var testDescription: String { "\(filter.comparator.rawValue) \(expected.sorted())" }

        init(_ comparator: Comparator, _ value: FieldValue, _ expected: Set<String>) {
            self.filter = Filter(comparator: comparator, field: .user("label"), value: value)
            self.expected = expected
        }
    }

    static let controlCases: [ControlCase] = [
        ControlCase(.equals, .string("a\u{0}b"), ["c2"]),
        ControlCase(.equals, .string("a\u{0}"), ["c1"]),
        ControlCase(.equals, .string("a\u{1}"), ["c3"]),
        ControlCase(.notEquals, .string("a\u{0}"), ["c0", "c2", "c3", "c4", "c5", "c6"]),
        ControlCase(.lessThan, .string("a\u{1}"), ["c0", "c1", "c2"]),
        ControlCase(.lessThanOrEquals, .string("a\u{0}b"), ["c0", "c1", "c2"]),
        ControlCase(.greaterThan, .string("a\u{0}b"), ["c3", "c4", "c5", "c6"]),
        ControlCase(.greaterThanOrEquals, .string("a\u{1}b"), ["c4", "c5", "c6"]),
        ControlCase(.beginsWith, .string("a\u{0}"), ["c1", "c2"]),
        ControlCase(.beginsWith, .string("a\u{1}"), ["c3", "c4"]),
        ControlCase(.notBeginsWith, .string("a\u{0}"), ["c0", "c3", "c4", "c5", "c6"]),
        ControlCase(.in, strings("a\u{0}b", "a\u{1}", "zz"), ["c2", "c3"]),
        ControlCase(.notIn, strings("a", "a\u{0}"), ["c2", "c3", "c4", "c5", "c6"]),
    ]

    @Test(arguments: StoreBackend.all(for: .queries), controlCases)
    func controlCharactersCompareBytewise(backend: StoreBackend, rule: ControlCase) throws {
        try Self.withControlLabels(backend) { store, fixture in
            let query = Query(recordType: "Label", filters: [rule.filter])
            let found = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(Set(found.map(\.record.recordName)) == rule.expected)
        }
    }

    @Test(arguments: StoreBackend.all(for: .queries), [true, false])
    func controlCharactersSortAndPageBytewise(backend: StoreBackend, ascending: Bool) throws {
        try Self.withControlLabels(backend) { store, fixture in
            let query = Query(recordType: "Label", sorts: [Sort(field: .user("label"), ascending: ascending)])
            var expected = (0..<Self.controlLabels.count).map { "c\($0)" }
            if !ascending { expected.reverse() }
            let all = try store.read { try $0.query(query, zones: [fixture.zone], limit: 100, after: nil, memberships: nil) }
            #expect(all.map(\.record.recordName) == expected)
            // Pages of two, each after the last one's cursor (the cursor holds the stored key).
            var paged: [String] = []
            var cursor: QueryCursor?
            while true {
                let page = try store.read { try $0.query(query, zones: [fixture.zone], limit: 2, after: cursor, memberships: nil) }
                paged += page.map(\.record.recordName)
                guard page.count == 2, let last = page.last?.cursor else { break }
                cursor = last
            }
            #expect(paged == expected)
        }
    }
}
