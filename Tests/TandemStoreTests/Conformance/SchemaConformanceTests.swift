import Testing
import TandemCore
import TandemStore

/// Schemas through `any Store` (decisions P5): the text and etag read back; indexing follows the
/// schema once there is one (fields it does not make QUERYABLE are not found by filters), and
/// `rebuildIndexes` brings existing records in line.
@Suite struct SchemaConformanceTests {
    @Test(arguments: StoreBackend.all(for: .schemas))
    func aSchemaReadsBackWithItsETag(backend: StoreBackend) throws {
        try backend.withStore { store in
            _ = try Fixture.make(store)
            #expect(try store.read { try $0.schema(container: Fixture.container, environment: .development) } == nil)
            _ = try store.write { tx in
                try tx.putSchema("DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE)", etag: "etag-1",
                                 fields: [IndexedField(recordType: "Note", field: "title", options: .queryable)],
                                 container: Fixture.container, environment: .development, createSortIndexes: true, at: 2_000)
            }
            let schema = try #require(try store.read { try $0.schema(container: Fixture.container, environment: .development) })
            #expect(schema.text == "DEFINE SCHEMA RECORD TYPE Note (title STRING QUERYABLE)")
            #expect(schema.etag == "etag-1")
            #expect(schema.updatedAt == 2_000)
            #expect(try store.read { try $0.schemaETag(container: Fixture.container, environment: .development) } == "etag-1")
            #expect(try store.read { try $0.schema(container: Fixture.container, environment: .production) } == nil)
        }
    }

    @Test(arguments: StoreBackend.all(for: .schemas))
    func indexingFollowsTheSchemaAndRebuildsCatchUp(backend: StoreBackend) throws {
        try backend.withStore { store in
            let fixture = try Fixture.make(store)
            func put(_ fields: [IndexedField], etag: String) throws -> Set<String> {
                try store.write { tx in
                    try tx.putSchema("DEFINE SCHEMA", etag: etag, fields: fields, container: Fixture.container, environment: .development,
                                     createSortIndexes: true, at: 2_000)
                }
            }
            _ = try put([IndexedField(recordType: "Note", field: "title", options: .queryable)], etag: "1")
            _ = try store.write { tx in
                try tx.save(fixture.record("n", fields: ["title": .string("hello"), "body": .string("world")]), in: fixture.zone)
            }
            func finds(_ field: String, _ value: String) throws -> Bool {
                let query = Query(recordType: "Note", filters: [Filter(comparator: .equals, field: .user(field), value: .string(value))])
                return try !store.read { try $0.query(query, zones: [fixture.zone], limit: 10, after: nil, memberships: nil) }.isEmpty
            }
            #expect(try finds("title", "hello"))
            #expect(try !finds("body", "world"), "a field the schema does not index is not found")
            let stale = try put([IndexedField(recordType: "Note", field: "title", options: .queryable),
                                 IndexedField(recordType: "Note", field: "body", options: .queryable)], etag: "2")
            #expect(stale.contains("Note"))
            var after: Int64 = 0
            while let done = try store.write({ [after] tx in
                try tx.rebuildIndexes(container: Fixture.container, environment: .development, recordType: "Note", after: after, limit: 10)
            }) { after = done.last }
            #expect(try finds("body", "world"))
        }
    }
}
