import Foundation
import Testing
import TandemCore
import TandemSchema

/// Just-in-time schema in development, enforcement in production, promotion between them
/// (issue 6), through a real server and the `tandem` CLI.
@Suite struct SchemaEnvironmentTests {
    static let schema = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                "___recordID" REFERENCE QUERYABLE,
                title         STRING QUERYABLE SEARCHABLE SORTABLE,
                stars         INT64 QUERYABLE SORTABLE,
                body          STRING,
                tags          LIST<STRING> QUERYABLE,
                GRANT WRITE TO "_creator",
                GRANT CREATE TO "_icloud",
                GRANT READ TO "_world"
            );
        """

    @Test func firstWritesInferTypesAndIndexesThatExportShows() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let saved = try server.save("n1", type: "Recipe", fields: [
            "title": Body.field("Pie"), "servings": Body.field(4), "rating": Body.field(4.5),
            "cooked": Body.field(.int(1_700_000_000_000), "TIMESTAMP"), "tags": Body.field(["sweet"]),
            "place": Body.field(["latitude": 1.0, "longitude": 2.0], "LOCATION"),
        ], container: container, token: server.token)
        #expect(saved["recordChangeTag"] != nil, "\(saved)")
        _ = try server.save("n2", type: "Recipe", fields: ["note": Body.field("later field")], container: container, token: server.token)
        let exported = try Schema(parsing: try server.exportSchema(container: container, environment: "development"))
        let recipe = try #require(exported.recordType(named: "Recipe"))
        func field(_ name: String) -> Field? { recipe.field(named: name) }
        #expect(field("title")?.type == .string)
        #expect(field("title")?.options == [.queryable, .sortable, .searchable])
        #expect(field("servings")?.type == .primitive(.int64), "the type it reads back as (F1)")
        #expect(field("rating")?.type == .primitive(.double), "the type it reads back as (F1)")
        #expect(field("cooked")?.type == .timestamp)
        #expect(field("tags")?.type == .list(.string))
        #expect(field("tags")?.options == [.queryable, .searchable])
        #expect(field("place")?.type == .primitive(.location))
        #expect(field("note")?.type == .string)
        #expect(recipe.rightsByRole == ["_creator": .write, "_icloud": .create, "_world": .read])
    }

    static let refusals: [(String, String, JSONObject, [String])] = [
        ("unknown record type", "Memo", ["title": Body.field("x")], ["Memo"]),
        ("unknown field", "Note", ["colour": Body.field("red")], ["Note", "colour"]),
        ("wrong type", "Note", ["stars": Body.field("five")], ["Note", "stars", "INT64"]),
        ("wrong list type", "Note", ["tags": Body.field([1, 2])], ["Note", "tags"]),
    ]

    @Test(arguments: refusals)
    func productionRefusesWhatTheSchemaDoesNotSay(label: String, type: String, fields: JSONObject, named: [String]) throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(Self.schema, container: container, environment: "production").status == 0)
        let item = try server.save(unique("r"), type: type, fields: fields, container: container, environment: "production", token: server.token)
        #expect(item.serverErrorCode == "BAD_REQUEST", "\(label): \(item)")
        let reason = item["reason"]?.stringValue ?? ""
        for word in named { #expect(reason.contains(word), "\(label): \(reason)") }
    }

    @Test func productionAcceptsWhatTheSchemaSays() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(Self.schema, container: container, environment: "production").status == 0)
        let item = try server.save("ok", type: "Note", fields: ["title": Body.field("Fine"), "stars": Body.field(3), "tags": Body.field(["a"])],
                                   container: container, environment: "production", token: server.token)
        #expect(item["recordChangeTag"] != nil, "\(item)")
    }

    @Test func productionWithoutASchemaRefusesWrites() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let item = try server.save("x", type: "Note", fields: ["title": Body.field("x")], container: container, environment: "production",
                                   token: server.token)
        #expect(item.serverErrorCode == "BAD_REQUEST")
        #expect(item["reason"]?.stringValue?.contains("no schema") == true)
    }

    @Test func promoteRefusesDataLosingChangesUnlessForced() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(Self.schema, container: container, environment: "production").status == 0)
        // Development drops Note.body and changes stars to STRING.
        let development = Self.schema.replacingOccurrences(of: "        body          STRING,\n", with: "")
            .replacingOccurrences(of: "stars         INT64", with: "stars         STRING")
        #expect(try server.importSchema(development, container: container, environment: "development").status == 0)
        let refused = try runTandem(["schema", "promote", "--container", container, "--data", server.dataDirectory])
        #expect(refused.status == 1)
        #expect(refused.error.contains("removed field Note.body"))
        #expect(refused.error.contains("changed type of field Note.stars"))
        #expect(try Schema(parsing: try server.exportSchema(container: container, environment: "production")) == Schema(parsing: Self.schema))

        let forced = try runTandem(["schema", "promote", "--container", container, "--force", "--data", server.dataDirectory])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(forced.output.contains("2 changes, 2 can lose production data"))
        #expect(try Schema(parsing: try server.exportSchema(container: container, environment: "production")) == Schema(parsing: development))
    }

    @Test func promoteWithoutDataLosingChangesNeedsNoForce() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        _ = try server.save("n", type: "Note", fields: ["title": Body.field("x")], container: container, token: server.token)
        let promoted = try runTandem(["schema", "promote", "--container", container, "--data", server.dataDirectory])
        #expect(promoted.status == 0, "\(promoted.error)")
        #expect(promoted.output.contains("added record type Note"))
        let item = try server.save("p", type: "Note", fields: ["title": Body.field("y")], container: container, environment: "production",
                                   token: server.token)
        #expect(item["recordChangeTag"] != nil, "\(item)")
    }

    @Test func productionImportRefusesDataLosingChangesUnlessForced() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        #expect(try server.importSchema(Self.schema, container: container, environment: "production").status == 0)
        let smaller = "DEFINE SCHEMA RECORD TYPE Other (name STRING);"
        let refused = try server.importSchema(smaller, container: container, environment: "production")
        #expect(refused.status == 1)
        #expect(refused.error.contains("removed record type Note"))
        #expect(try server.importSchema(smaller, container: container, environment: "production", force: true).status == 0)
    }
}
