import Foundation
import Testing
import TandemSchema

/// The diff names every change and marks the ones that can lose production data.
@Suite struct DiffTests {
    static let base = """
        DEFINE SCHEMA
        CREATE ROLE editor;
        RECORD TYPE Note (
            "___recordID" REFERENCE QUERYABLE,
            title STRING QUERYABLE,
            stars INT64,
            GRANT READ TO "_world",
            GRANT WRITE TO editor
        );
        RECORD TYPE Tag (name STRING);
        """

    /// (label, the new schema, the changes from `base`, as lines).
    static let cases: [(String, String, [String])] = [
        ("same schema, other layout and comments", """
            -- reordered grants, same rights
            define schema create role editor;
            record type Note ("___recordID" REFERENCE QUERYABLE, title STRING QUERYABLE, stars INT64,
                              GRANT WRITE TO editor, GRANT READ TO "_world");
            record type Tag (name STRING, "___etag" STRING);
            """, []),
        ("record type added", base + "RECORD TYPE Photo (image ASSET, GRANT READ TO \"_world\");",
         ["added record type Photo (1 field, 1 grant)"]),
        ("record type removed", base.replacingOccurrences(of: "RECORD TYPE Tag (name STRING);", with: ""),
         ["! removed record type Tag"]),
        ("field added", base.replacingOccurrences(of: "stars INT64,", with: "stars INT64, body STRING SEARCHABLE,"),
         ["added field Note.body STRING SEARCHABLE"]),
        ("field removed", base.replacingOccurrences(of: "stars INT64,", with: ""),
         ["! removed field Note.stars (INT64)"]),
        ("field type changed", base.replacingOccurrences(of: "stars INT64,", with: "stars DOUBLE,"),
         ["! changed type of field Note.stars from INT64 to DOUBLE"]),
        ("list element type changed", base.replacingOccurrences(of: "name STRING", with: "name LIST<STRING>"),
         ["! changed type of field Tag.name from STRING to LIST<STRING>"]),
        ("options changed", base.replacingOccurrences(of: "title STRING QUERYABLE,", with: "title STRING SORTABLE SEARCHABLE,"),
         ["changed options of field Note.title from QUERYABLE to SEARCHABLE SORTABLE"]),
        ("system field dropped keeps the field", base.replacingOccurrences(of: "\"___recordID\" REFERENCE QUERYABLE,", with: ""),
         ["changed options of field Note.___recordID from QUERYABLE to none"]),
        ("rights changed", base.replacingOccurrences(of: "GRANT READ TO \"_world\"", with: "GRANT READ, CREATE TO \"_icloud\""),
         ["changed rights of role _icloud on Note from none to READ, CREATE", "changed rights of role _world on Note from READ to none"]),
        ("role added and removed", base.replacingOccurrences(of: "CREATE ROLE editor;", with: "CREATE ROLE editor; CREATE ROLE admin;"),
         ["added role admin"]),
        ("several at once", """
            DEFINE SCHEMA
            RECORD TYPE Note ("___recordID" REFERENCE QUERYABLE, title STRING, GRANT READ TO "_world");
            """,
         ["! removed role editor (users holding it lose it)", "changed options of field Note.title from QUERYABLE to none",
          "! removed field Note.stars (INT64)", "changed rights of role editor on Note from WRITE to none",
          "! removed record type Tag"]),
    ]

    @Test(arguments: cases.map(\.0))
    func diffNamesEveryChange(label: String) throws {
        let (_, text, expected) = Self.cases.first { $0.0 == label }!
        let changes = try Schema(parsing: Self.base).changes(to: try Schema(parsing: text))
        #expect(changes.map { ($0.losesData ? "! " : "") + $0.description } == expected)
    }

    @Test func reportMarksDataLosingChangesAndCounts() throws {
        let new = try Schema(parsing: Self.base.replacingOccurrences(of: "stars INT64,", with: "stars STRING, body STRING,"))
        #expect(try Schema(parsing: Self.base).changes(to: new).report == """
            ! changed type of field Note.stars from INT64 to STRING  (can lose production data)
              added field Note.body STRING
            2 changes, 1 can lose production data

            """)
        #expect([SchemaChange]().report == "no changes\n")
    }

    @Test("reordering or removing roles in the middle moves users' role assignments: data-losing")
    func rolePositions() throws {
        func schema(_ roles: [String]) throws -> Schema {
            try Schema(parsing: "DEFINE SCHEMA\n" + roles.map { "CREATE ROLE \($0);\n" }.joined() + "RECORD TYPE A (x STRING);", file: "t.ckdb")
        }
        let base = try schema(["moderator", "editor"])
        #expect(base.changes(to: try schema(["moderator", "editor", "viewer"])).allSatisfy { !$0.losesData })
        #expect(base.changes(to: try schema(["editor", "moderator"])).contains { $0.losesData })
        #expect(base.changes(to: try schema(["editor"])).contains { if case .rolePositionsChanged = $0 { true } else { false } })
    }
}
