import Foundation
import Testing

/// `tandem schema validate` and `tandem schema diff` on real files, through the built binary.
@Suite final class SchemaCommandTests {
    let directory = NSTemporaryDirectory() + "tandem-schema-" + UUID().uuidString

    init() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    static let good = """
        DEFINE SCHEMA
            RECORD TYPE Note (
                title STRING QUERYABLE,
                stars INT64,
                GRANT READ TO "_world"
            );
        """

    /// Writes `text` to a fresh `.ckdb` file in this test's directory and returns its path.
    func file(_ text: String) throws -> String {
        let path = directory + "/" + UUID().uuidString + ".ckdb"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test func validFileExitsZero() throws {
        let path = try file(Self.good)
        let result = try runTandem(["schema", "validate", path])
        #expect(result.status == 0)
        #expect(result.output == "\(path): valid; record types: 1, custom roles: 0\n")
        #expect(result.error.isEmpty)
    }

    @Test func invalidFileReportsFileLineColumnAndExitsNonZero() throws {
        let path = try file(Self.good.replacingOccurrences(of: "stars INT64", with: "stars INTEGER"))
        let result = try runTandem(["schema", "validate", path])
        #expect(result.status == 1)
        #expect(result.error.hasPrefix("\(path):4:15: expected a type ("), "\(result.error)")
        #expect(result.error.hasSuffix("found 'INTEGER'\n"))
    }

    @Test func missingFileIsReportedInTheSameShape() throws {
        let result = try runTandem(["schema", "validate", "/nonexistent/schema.ckdb"])
        #expect(result.status == 1)
        #expect(result.error == "/nonexistent/schema.ckdb:1:1: cannot read the file\n")
    }

    @Test func diffPrintsChangesAndMarksDataLosingOnes() throws {
        let old = try file(Self.good)
        let new = try file(Self.good.replacingOccurrences(of: "stars INT64,", with: "body STRING SEARCHABLE,"))
        let result = try runTandem(["schema", "diff", old, new])
        #expect(result.status == 0)
        #expect(result.output == """
              added field Note.body STRING SEARCHABLE
            ! removed field Note.stars (INT64)  (can lose production data)
            2 changes, 1 can lose production data

            """)
    }

    @Test func diffWithoutTwoFilesIsAUsageError() throws {
        let result = try runTandem(["schema", "diff", "one.ckdb"])
        #expect(result.status == 64)
        #expect(result.error.contains("tandem schema diff OLD NEW"))
    }
}
