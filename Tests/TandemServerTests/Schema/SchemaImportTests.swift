import Foundation
import Testing
import TandemCore
import TandemSchema
import TandemServer
import TandemStore
import TandemSQLite
import TandemStoreSQLite

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

    static func types(_ count: Int, fields: Int = 1, name: (Int) -> String = { "T\($0)" }, field: String = "f") -> String {
        let fieldList = (0..<fields).map { "\(field)\($0 == 0 ? "" : String($0)) STRING" }.joined(separator: ", ")
        return "DEFINE SCHEMA\n" + (0..<count).map { "  RECORD TYPE \"\(name($0))\" (\(fieldList));" }.joined(separator: "\n")
    }

    /// Issue 14 item 15: the import took a 100,000-character type name and 1,000 types. Names
    /// follow the record API's rules; counts have limits (`SchemaLimits`).
    static let limitCases: [(label: String, text: String, accepted: Bool)] = [
        ("a 255-character type name", types(1, name: { _ in "T" + String(repeating: "a", count: 254) }), true),
        ("a 256-character type name", types(1, name: { _ in "T" + String(repeating: "a", count: 255) }), false),
        ("a 100,000-character type name", types(1, name: { _ in "T" + String(repeating: "a", count: 99_999) }), false),
        ("a type name the record API refuses", types(1, name: { _ in "My-Type" }), false),
        ("a 256-character field name", types(1, field: "f" + String(repeating: "b", count: 255)), false),
        ("a field name the record API refuses", types(1, field: "\"f.x\""), false),
        ("\(SchemaLimits.recordTypes) types", types(SchemaLimits.recordTypes), true),
        ("\(SchemaLimits.recordTypes + 1) types", types(SchemaLimits.recordTypes + 1), false),
        ("1,000 types", types(1000), false),
        ("\(SchemaLimits.fields + 1) fields in all", types(SchemaLimits.fields / SchemaLimits.fieldsPerType + 1, fields: SchemaLimits.fieldsPerType), false),
        ("\(SchemaLimits.fieldsPerType) fields", types(1, fields: SchemaLimits.fieldsPerType), true),
        ("\(SchemaLimits.fieldsPerType + 1) fields", types(1, fields: SchemaLimits.fieldsPerType + 1), false),
        ("\(SchemaLimits.grantsPerType) grants", "DEFINE SCHEMA\n  RECORD TYPE D (x STRING" + String(repeating: ", GRANT READ TO \"_world\"", count: SchemaLimits.grantsPerType) + ");", true),
        ("\(SchemaLimits.grantsPerType + 1) grants", "DEFINE SCHEMA\n  RECORD TYPE D (x STRING" + String(repeating: ", GRANT READ TO \"_world\"", count: SchemaLimits.grantsPerType + 1) + ");", false),
        ("\(SchemaLimits.roles + 1) roles", "DEFINE SCHEMA\n" + (0...SchemaLimits.roles).map { "  CREATE ROLE r\($0);" }.joined(separator: "\n"), false),
    ]

    @Test(arguments: limitCases.map(\.label))
    func namesAndCountsFollowTheRecordAPIsLimits(label: String) throws {
        let example = Self.limitCases.first { $0.label == label }!
        let service = SchemaService(store: store)
        if example.accepted {
            _ = try service.importSchema(example.text, file: "limits.ckdb", container: container, environment: .development, force: true)
            return
        }
        #expect {
            try service.importSchema(example.text, file: "limits.ckdb", container: container, environment: .development, force: true)
        } throws: { error in
            (error as? CloudKitError)?.code == .badRequest && (error as? CloudKitError)?.reason.contains("at most") == true
        }
        let exported = try service.export(container: container, environment: .development)
        #expect(exported.utf8.count < 1000, "nothing of the refused file was installed")
    }

    @Test func anUnknownContainerIsNotFound() throws {
        #expect {
            try SchemaService(store: store).export(container: "iCloud.nope", environment: .development)
        } throws: { error in
            (error as? CloudKitError)?.code == .notFound
        }
    }
}
