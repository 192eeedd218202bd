import Testing
import TandemSchema

/// The printer writes CloudKit's export layout, quotes only what must be quoted, and is stable.
@Suite struct PrinterTests {
    @Test func printsExportLayout() throws {
        let schema = Schema(roles: ["moderator"], recordTypes: [
            RecordType(name: "Note", fields: [
                Field(name: "___recordID", type: .reference, options: .queryable),
                Field(name: "title", type: .string, options: [.sortable, .searchable, .queryable]),
                Field(name: "grant", type: .primitive(.number(preferred: .int64))),
                Field(name: "tags", type: .list(.string)),
                Field(name: "secret", type: .primitive(.encrypted(.bytes))),
            ], grants: [Grant([.write, .read], to: "_creator"), Grant(.create, to: "moderator")]),
            RecordType(name: "cloudkit.share"),
        ])
        #expect(schema.ckdb == """
            DEFINE SCHEMA

                CREATE ROLE moderator;

                RECORD TYPE Note (
                    "___recordID" REFERENCE QUERYABLE,
                    title         STRING QUERYABLE SEARCHABLE SORTABLE,
                    "grant"       NUMBER PREFERRED AS INT64,
                    tags          LIST<STRING>,
                    secret        ENCRYPTED BYTES,
                    GRANT READ, WRITE TO "_creator",
                    GRANT CREATE TO moderator
                );

                RECORD TYPE "cloudkit.share" ();


            """)
        #expect(try Schema(parsing: schema.ckdb) == schema)
    }

    /// A file in the dashboard's export layout, without comments, prints back byte for byte.
    @Test func exportedFilePrintsBackUnchanged() throws {
        let text = try Fixtures.text("020.ckdb")
        #expect(try Schema(parsing: text).ckdb == text)
    }

    /// Names that look like keywords print bare where the grammar reads them by position, and
    /// quoted where they would be misread; either way they parse back.
    @Test(arguments: ["TYPE", "LIST", "STRING", "to", "READ", "Grant", "queryable", "cloudkit.title", "9lives", "naïve"])
    func oddNamesRoundTrip(name: String) throws {
        let schema = Schema(roles: [name], recordTypes: [
            RecordType(name: name, fields: [Field(name: name, type: .string)], grants: [Grant(.read, to: name)]),
        ])
        #expect(try Schema(parsing: schema.ckdb) == schema)
    }
}
