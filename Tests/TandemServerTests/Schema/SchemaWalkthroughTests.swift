import Foundation
import Testing
import TandemCore

/// The README's schema walk-through as issue 22 found it broken: development inferred `NUMBER`
/// for a value stored and read back as `INT64`, so `promote` after importing an `INT64` file
/// refused; an HTTP import into development applied data-losing changes unasked and said records
/// were removed that were still there; a second promote said "no changes" and then "updated".
@Suite struct SchemaWalkthroughTests {
    static let file = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                "___recordID" REFERENCE QUERYABLE,
                title         STRING QUERYABLE SEARCHABLE SORTABLE,
                stars         INT64,
                GRANT READ TO "_world"
            );
        """

    @Test func aWrittenIntegerIsInferredAsTheTypeItReadsBackAs() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let saved = try server.save("n1", type: "Note", fields: ["stars": ["value": 5], "ratio": ["value": 0.5]],
                                    container: container, token: server.token)
        #expect(saved["fields"]?["stars"]?["type"]?.stringValue == "INT64", "\(saved)")
        let export = try server.exportSchema(container: container, environment: "development")
        #expect(export.contains("stars INT64 QUERYABLE SORTABLE"), "\(export)")
        #expect(export.contains("ratio DOUBLE QUERYABLE SORTABLE"), "\(export)")
        #expect(!export.contains("NUMBER"), "\(export)")
    }

    @Test func promoteAfterImportingTheFileDeploysWithoutForceAndASecondPromoteSaysUnchanged() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        _ = try server.save("n1", type: "Note", fields: ["title": ["value": "Hello"], "stars": ["value": 5]],
                            container: container, token: server.token)
        let imported = try server.importSchema(Self.file, container: container, environment: "production")
        #expect(imported.status == 0, "\(imported.error)")
        let promote = ["schema", "promote", "--container", container, "--data", server.dataDirectory]
        let first = try runTandem(promote)
        #expect(first.status == 0, "\(first.error)")
        #expect(first.output.contains("0 can lose production data") && first.output.hasSuffix("production updated\n"), "\(first.output)")
        let second = try runTandem(promote)
        #expect(second.status == 0, "\(second.error)")
        #expect(second.output == "no changes\nschema of \(container) production unchanged\n", "\(second.output)")
    }

    @Test func anHTTPImportIntoDevelopmentThatLosesDataNeedsForceAndKeepsTheRecords() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        _ = try server.save("lisbon", type: "Trip", fields: ["title": ["value": "Lisbon in May"]], container: container, token: server.token)
        _ = try server.save("n1", type: "Note", fields: ["title": ["value": "Hello"], "stars": ["value": 5]],
                            container: container, token: server.token)
        let admin = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
        let url = "\(server.baseURL)/tandem/1/\(container)/development/schema/import"
        let before = try server.exportSchema(container: container, environment: "development")

        let refused = try server.request("POST", url, body: Data(Self.file.utf8), token: .some(admin))
        #expect(refused.status == 400, "\(refused.text)")
        #expect(refused.json["serverErrorCode"]?.stringValue == "BAD_REQUEST")
        #expect(refused.json["reason"]?.stringValue?.contains("removed record type Trip") == true, "\(refused.text)")
        #expect(try server.exportSchema(container: container, environment: "development") == before, "a refused import changes nothing")

        let forced = try server.request("POST", url + "?force=true", body: Data(Self.file.utf8), token: .some(admin))
        #expect(forced.status == 200, "\(forced.text)")
        let changes = forced.json["changes"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(changes.contains("removed record type Trip"), "\(changes)")
        #expect(!changes.contains { $0.contains("and its records") }, "the report says what happened: records are kept")
        let lookup = try server.post("records/lookup", ["records": [["recordName": "lisbon"]]], container: container, token: server.token)
        #expect(lookup.json.record(0)["fields"]?["title"]?["value"]?.stringValue == "Lisbon in May", "\(lookup.text)")
    }

    @Test func theCLIRefusesADataLosingDevelopmentImportWithoutForce() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        _ = try server.save("lisbon", type: "Trip", fields: ["title": ["value": "Lisbon in May"]], container: container, token: server.token)
        let refused = try server.importSchema(Self.file, container: container, environment: "development")
        #expect(refused.status == 1 && refused.error.contains("removed record type Trip"), "\(refused.error)")
        let forced = try server.importSchema(Self.file, container: container, environment: "development", force: true)
        #expect(forced.status == 0, "\(forced.error)")
        #expect(forced.output.contains("! removed record type Trip  (can lose production data)"), "\(forced.output)")
    }
}
