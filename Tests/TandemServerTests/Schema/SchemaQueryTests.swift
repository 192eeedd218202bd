import Foundation
import Testing
import TandemCore

/// Queries under a schema: fields without the index a filter or sort needs are refused, as
/// CloudKit refuses them; SEARCHABLE fields answer CONTAINS_ALL_TOKENS / CONTAINS_ANY_TOKENS.
@Suite struct SchemaQueryTests {
    static func filter(_ comparator: String, _ field: String, _ value: JSONValue) -> JSONValue {
        ["comparator": .string(comparator), "fieldName": .string(field), "fieldValue": Body.field(value)]
    }

    static let refusals: [(String, JSONValue, String)] = [
        ("equality on an unmarked field", ["recordType": "Note", "filterBy": [filter("EQUALS", "body", "x")]], "field 'body' of record type 'Note' is not marked queryable"),
        ("range on a queryable-only field", ["recordType": "Note", "filterBy": [filter("LESS_THAN", "tags", "x")]], "field 'tags' of record type 'Note' is not marked sortable"),
        ("sort on an unmarked field", ["recordType": "Note", "sortBy": [["fieldName": "body"]]], "field 'body' of record type 'Note' is not marked sortable"),
        ("tokens on an unsearchable field", ["recordType": "Note", "filterBy": [filter("CONTAINS_ALL_TOKENS", "body", "x")]], "field 'body' of record type 'Note' is not marked searchable"),
    ]

    @Test(arguments: refusals, ["development", "production"])
    func queriesNeedTheIndexTheyUse(_ refusal: (String, JSONValue, String), environment: String) throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: environment).status == 0)
        let response = try server.query(refusal.1, container: container, environment: environment, token: server.token)
        #expect(response.status == 400, "\(refusal.0): \(response.text)")
        #expect(response.json["reason"]?.stringValue == refusal.2, "\(refusal.0)")
    }

    @Test func productionRefusesQueriesOnFieldsAndTypesItDoesNotHave() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: "production").status == 0)
        let field = try server.query(["recordType": "Note", "filterBy": [Self.filter("EQUALS", "colour", "red")]], container: container,
                                     environment: "production", token: server.token)
        #expect(field.json["reason"]?.stringValue == "record type 'Note' has no field 'colour' in the production schema")
        let type = try server.query(["recordType": "Memo"], container: container, environment: "production", token: server.token)
        #expect(type.json["reason"]?.stringValue == "record type 'Memo' is not in the production schema")
    }

    @Test func developmentAllowsFieldsItHasNotSeenYet() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let response = try server.query(["recordType": "Unseen", "filterBy": [Self.filter("EQUALS", "colour", "red")],
                                         "sortBy": [["fieldName": "size"]]], container: container, token: server.token)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json.records.isEmpty)
    }

    static let searches: [(String, String, [String])] = [
        ("CONTAINS_ALL_TOKENS", "apple pie", ["p1"]),
        ("CONTAINS_ALL_TOKENS", "PIE", ["p1", "p3"]),
        ("CONTAINS_ALL_TOKENS", "apple tart", []),
        ("CONTAINS_ANY_TOKENS", "apple tart", ["p1", "p2", "p4"]),
        ("CONTAINS_ANY_TOKENS", "crème", ["p4"]),
        ("CONTAINS_ANY_TOKENS", "nothing here", []),
    ]

    @Test(arguments: searches, ["development", "production"])
    func fullTextQueriesUseSearchableFields(_ search: (String, String, [String]), environment: String) throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        if environment == "production" {
            #expect(try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: environment).status == 0)
        }
        let titles = [("p1", "Apple pie"), ("p2", "Apple juice"), ("p3", "Cherry pie"), ("p4", "Crème brûlée tart"), ("p5", "Lemon cake")]
        for (name, title) in titles {
            // `body` holds the words too, but is not searchable in production: it must not match there.
            let item = try server.save(name, type: "Note", fields: ["title": Body.field(.string(title))], container: container,
                                       environment: environment, token: server.token)
            #expect(item["recordChangeTag"] != nil, "\(item)")
        }
        _ = try server.save("decoy", type: "Note", fields: ["title": Body.field("Lemon"), "body": Body.field("apple pie tart crème")],
                            container: container, environment: environment, token: server.token)
        let response = try server.query(["recordType": "Note", "filterBy": [Self.filter(search.0, "title", .string(search.1))]],
                                        container: container, environment: environment, token: server.token)
        #expect(response.status == 200, "\(response.text)")
        #expect(response.json.records.compactMap { $0["recordName"]?.stringValue }.sorted() == search.2, "\(search)")
    }

    @Test func sortsOnSortableFieldsOrderRecords() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: "production").status == 0)
        for (name, title, stars) in [("a", "Banana", 2), ("b", "apple", 5), ("c", "Cherry", 1)] {
            _ = try server.save(name, type: "Note", fields: ["title": Body.field(.string(title)), "stars": Body.field(.int(Int64(stars)))],
                                container: container, environment: "production", token: server.token)
        }
        func names(_ sort: JSONValue) throws -> [String] {
            let response = try server.query(["recordType": "Note", "sortBy": [sort]], container: container, environment: "production",
                                            token: server.token)
            return response.json.records.compactMap { $0["recordName"]?.stringValue }
        }
        #expect(try names(["fieldName": "title"]) == ["a", "c", "b"])
        #expect(try names(["fieldName": "stars", "ascending": false]) == ["b", "a", "c"])
    }
}
