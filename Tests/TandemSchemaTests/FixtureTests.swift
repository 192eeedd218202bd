import Testing
import TandemSchema

/// Every real `.ckdb` file parses, prints, and parses back to an equal model; printing is stable.
@Suite struct FixtureTests {
    /// `013.ckdb` is an Xcode file template (a comment header and `import Foundation`), not a
    /// schema: it has no `DEFINE SCHEMA`. It must be refused at the `import`, not accepted.
    static let notASchema: Set<String> = ["013.ckdb"]

    @Test(arguments: Fixtures.names.filter { !notASchema.contains($0) })
    func fixtureRoundTripsThroughThePrinter(name: String) throws {
        let schema = try Schema(parsing: try Fixtures.text(name), file: name)
        #expect(schema.recordTypes.isEmpty == false)
        let printed = schema.ckdb
        let reparsed = try Schema(parsing: printed, file: "printed \(name)")
        #expect(reparsed == schema)
        #expect(reparsed.ckdb == printed)
        #expect(schema.changes(to: reparsed).isEmpty)
    }

    @Test func xcodeTemplateIsRefusedAtItsImportLine() throws {
        #expect(Fixtures.names.count == 32)
        let error = #expect(throws: SchemaError.self) { try Schema(parsing: try Fixtures.text("013.ckdb"), file: "013.ckdb") }
        #expect(error?.description == "013.ckdb:8:1: expected DEFINE SCHEMA, found 'import'")
    }
}
