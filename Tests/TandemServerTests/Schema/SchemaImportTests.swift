import Foundation
import Testing
import TandemCore
import TandemSchema
import TandemServer
import TandemStore
import TandemSQLite

/// Every real `.ckdb` file imports into a container and exports back to the same model, in
/// process against a store in a temporary directory.
@Suite final class SchemaImportTests {
    let directory = NSTemporaryDirectory() + "tandem-import-" + UUID().uuidString
    let store: SQLiteStore
    let container = "iCloud.com.example.fixtures"

    init() throws {
        store = try SQLiteStore(directory: directory, synchronous: .normal, readerCount: 1)
        _ = try Admin.createContainer(container, store: store)
    }

    deinit {
        store.close()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// `013.ckdb` is an Xcode file template, not a schema (see TandemSchemaTests.FixtureTests).
    static let notASchema = "013.ckdb"

    @Test(arguments: SchemaFixtures.names.filter { $0 != notASchema })
    func fixtureImportsAndExportsTheSameModel(name: String) throws {
        let text = try String(contentsOfFile: SchemaFixtures.path(name), encoding: .utf8)
        let parsed = try Schema(parsing: text, file: name)
        let service = SchemaService(store: store)
        for environment in Environment.allCases {
            _ = try service.importSchema(text, file: name, container: container, environment: environment, force: true)
            let exported = try service.export(container: container, environment: environment)
            #expect(try Schema(parsing: exported, file: "export") == parsed)
        }
    }

    @Test func reimportingTheSameFileChangesNothing() throws {
        let name = try #require(SchemaFixtures.names.first)
        let text = try String(contentsOfFile: SchemaFixtures.path(name), encoding: .utf8)
        let service = SchemaService(store: store)
        _ = try service.importSchema(text, file: name, container: container, environment: .production)
        let again = try service.importSchema(text, file: name, container: container, environment: .production)
        #expect(again.changes.isEmpty)
    }

    @Test func theXcodeTemplateIsRefusedAtItsImportLine() throws {
        #expect(SchemaFixtures.names.count == 32)
        let text = try String(contentsOfFile: SchemaFixtures.path(Self.notASchema), encoding: .utf8)
        #expect {
            try SchemaService(store: store).importSchema(text, file: Self.notASchema, container: container, environment: .development)
        } throws: { error in
            (error as? CloudKitError)?.reason == "013.ckdb:8:1: expected DEFINE SCHEMA, found 'import'"
        }
    }

    @Test func aFileThatDoesNotParseIsRefusedWithItsPosition() throws {
        #expect {
            try SchemaService(store: store).importSchema("DEFINE SCHEMA\n  RECORD TYPE Note (title STRIN);", file: "bad.ckdb",
                                                         container: container, environment: .development)
        } throws: { error in
            (error as? CloudKitError)?.reason.hasPrefix("bad.ckdb:2:") == true
        }
    }

    @Test func anUnknownContainerIsNotFound() throws {
        #expect {
            try SchemaService(store: store).export(container: "iCloud.nope", environment: .development)
        } throws: { error in
            (error as? CloudKitError)?.code == .notFound
        }
    }
}
