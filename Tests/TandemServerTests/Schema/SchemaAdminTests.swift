import Foundation
import Testing
import TandemCore
import TandemSchema
import TandemTestSupport

/// The schema commands of the built `tandem` and the admin endpoint
/// `/tandem/1/{container}/{environment}/schema/{export,import,promote}`.
@Suite struct SchemaAdminTests {
    @Test func importExportAndPromoteThroughTheCLI() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let imported = try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: "development")
        #expect(imported.status == 0, "\(imported.error)")
        #expect(imported.output.contains("added record type Note"))
        #expect(imported.output.hasSuffix("schema of \(container) development updated\n"))
        let exported = try server.exportSchema(container: container, environment: "development")
        #expect(try Schema(parsing: exported) == Schema(parsing: SchemaEnvironmentTests.schema))
        #expect(exported.contains("title         STRING QUERYABLE SEARCHABLE SORTABLE"))
        let promoted = try runTandem(["schema", "promote", "--container", container, "--data", server.dataDirectory])
        #expect(promoted.status == 0)
        #expect(try server.exportSchema(container: container, environment: "production") == exported)
    }

    @Test func aBadFileIsRefusedWithItsPosition() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let result = try server.importSchema("DEFINE SCHEMA\n    RECORD TYPE Note (title TEXT);\n", container: container, environment: "development")
        #expect(result.status == 1)
        #expect(result.error.contains(".ckdb:2:29: expected a type"), "\(result.error)")
    }

    @Test func missingOptionsAreUsageErrors() throws {
        let result = try runTandem(["schema", "export", "--container", "x"])
        #expect(result.status == 64)
        #expect(result.error.contains("--environment"))
    }

    @Test func theEndpointImportsExportsAndPromotesWithAnAdminToken() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let admin = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
        #expect(admin.hasPrefix("tda_"))
        let base = "\(server.baseURL)/tandem/1/\(container)"
        let body = Data(SchemaEnvironmentTests.schema.utf8)
        let imported = try server.request("POST", base + "/development/schema/import", body: body, token: .some(admin),
                                          headers: ["Content-Type": "text/plain"])
        #expect(imported.status == 200, "\(imported.text)")
        #expect(imported.json["changes"]?.arrayValue?.first?.stringValue?.hasPrefix("added record type Note") == true)
        let exported = try server.request("GET", base + "/development/schema/export", token: .some(admin))
        #expect(exported.status == 200)
        #expect(exported.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(try Schema(parsing: exported.text) == Schema(parsing: SchemaEnvironmentTests.schema))

        let promoted = try server.request("POST", base + "/production/schema/promote", body: Data(), token: .some(admin))
        #expect(promoted.status == 200, "\(promoted.text)")
        #expect(try server.request("GET", base + "/production/schema/export", token: .some(admin)).text == exported.text)

        let smaller = Data("DEFINE SCHEMA RECORD TYPE Other (name STRING);".utf8)
        let refused = try server.request("POST", base + "/production/schema/import", body: smaller, token: .some(admin))
        #expect(refused.status == 400)
        #expect(refused.json["reason"]?.stringValue?.contains("removed record type Note") == true)
        let forced = try server.request("POST", base + "/production/schema/import?force=true", body: smaller, token: .some(admin))
        #expect(forced.status == 200)
        #expect(forced.json["dataLosingChanges"]?.int64Value == 1)
    }

    /// `curl -X POST …/schema/promote` sends no content-length: the promote has no body, so that
    /// is an empty one (A40, F44), not 411; import still needs its length, and the admin token
    /// is checked as before.
    @Test func promoteNeedsNoBodyOrLength() throws {
        let server = try SchemaServer.server
        let container = try server.makeContainer()
        let admin = try TestServer.admin(["token", "create", "--admin", "--data", server.dataDirectory])
        let imported = try server.importSchema(SchemaEnvironmentTests.schema, container: container, environment: "development")
        #expect(imported.status == 0, "\(imported.error)")
        func bodiless(_ operation: String, token: String?, length: String = "") throws -> RawSocket.Reply {
            let socket = try RawSocket(port: server.port)
            socket.send("POST /tandem/1/\(container)/production/schema/\(operation) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                        + (token.map { "Authorization: Bearer \($0)\r\n" } ?? "") + length + "\r\n")
            return socket.readUntilClosed(seconds: 20)
        }
        // Without a token: refused as with an empty body of stated length.
        let anonymous = try bodiless("promote", token: nil)
        let anonymousWithLength = try bodiless("promote", token: nil, length: "Content-Length: 0\r\n")
        #expect(anonymous.status == anonymousWithLength.status && anonymous.body.contains("AUTHENTICATION_REQUIRED"), "\(anonymous.text)")
        let promoted = try bodiless("promote", token: admin)
        #expect(promoted.status == 200, "\(promoted.text)")
        #expect(promoted.body.contains("added record type Note"), "\(promoted.text)")
        #expect(try server.exportSchema(container: container, environment: "production")
                == server.exportSchema(container: container, environment: "development"))
        let importWithoutLength = try bodiless("import", token: admin)
        #expect(importWithoutLength.status == 411, "\(importWithoutLength.text)")
    }

    @Test func theEndpointRefusesUserTokensAndAnonymousCallers() throws {
        let server = try SchemaServer.server
        let url = "\(server.baseURL)/tandem/1/\(TestServer.container)/development/schema/export"
        #expect(try server.request("GET", url).status == 401)
        let anonymous = try server.request("GET", url, token: .some(nil))
        #expect(anonymous.status == 421)
        let bad = try server.request("POST", "\(server.baseURL)/tandem/1/\(TestServer.container)/development/schema/import", body: Data("DEFINE SCHEMA RECORD TYPE".utf8),
                                     token: .some(server.token))
        #expect(bad.json.serverErrorCode == "AUTHENTICATION_FAILED")
    }
}
