import Testing
import TandemSchema

/// Each construct of the grammar (spec §5.2) parses to the model it means.
@Suite struct ParserTests {
    /// (label, one field declaration, the field it declares).
    static let fields: [(String, String, Field)] = [
        ("asset", "a ASSET", Field(name: "a", type: .primitive(.asset))),
        ("bytes", "a BYTES", Field(name: "a", type: .primitive(.bytes))),
        ("double", "a DOUBLE", Field(name: "a", type: .primitive(.double))),
        ("int64", "a INT64", Field(name: "a", type: .primitive(.int64))),
        ("location", "a LOCATION", Field(name: "a", type: .primitive(.location))),
        ("reference", "a REFERENCE", Field(name: "a", type: .primitive(.reference))),
        ("string", "a STRING", Field(name: "a", type: .string)),
        ("timestamp", "a TIMESTAMP", Field(name: "a", type: .timestamp)),
        ("list", "a LIST<STRING>", Field(name: "a", type: .list(.string))),
        ("list with spaces", "a LIST < INT64 >", Field(name: "a", type: .list(.int64))),
        ("list of encrypted", "a LIST<ENCRYPTED BYTES>", Field(name: "a", type: .list(.encrypted(.bytes)))),
        ("encrypted string", "a ENCRYPTED STRING", Field(name: "a", type: .primitive(.encrypted(.string)))),
        ("encrypted location", "a ENCRYPTED LOCATION", Field(name: "a", type: .primitive(.encrypted(.location)))),
        ("number", "a NUMBER", Field(name: "a", type: .primitive(.number(preferred: nil)))),
        ("number preferred int64", "a NUMBER PREFERRED AS INT64", Field(name: "a", type: .primitive(.number(preferred: .int64)))),
        ("number preferred double", "a NUMBER PREFERRED AS DOUBLE QUERYABLE", Field(name: "a", type: .primitive(.number(preferred: .double)), options: .queryable)),
        ("all options in any order", "a STRING SEARCHABLE QUERYABLE SORTABLE", Field(name: "a", type: .string, options: [.queryable, .sortable, .searchable])),
        ("searchable list of strings", "a LIST<STRING> SEARCHABLE", Field(name: "a", type: .list(.string), options: .searchable)),
        ("keywords ignore case", "a list<string> queryable", Field(name: "a", type: .list(.string), options: .queryable)),
        ("quoted name", "\"title\" STRING", Field(name: "title", type: .string)),
        ("quoted reserved word", "\"grant\" STRING", Field(name: "grant", type: .string)),
        ("quoted name with a dot", "\"cloudkit.title\" STRING", Field(name: "cloudkit.title", type: .string)),
        ("keyword-like bare names", "type STRING", Field(name: "type", type: .string)),
        ("name like a type", "location LOCATION", Field(name: "location", type: .primitive(.location))),
        ("system field with options", "\"___recordID\" REFERENCE QUERYABLE", Field(name: "___recordID", type: .reference, options: .queryable)),
    ]

    @Test(arguments: fields.map(\.0))
    func fieldDeclarationParses(label: String) throws {
        let (_, text, field) = Self.fields.first { $0.0 == label }!
        let schema = try Schema(parsing: "DEFINE SCHEMA RECORD TYPE T (\(text));")
        #expect(schema.recordTypes == [RecordType(name: "T", fields: [field])])
    }

    /// (label, one grant, the grant it declares).
    static let grants: [(String, String, Grant)] = [
        ("one right", "GRANT READ TO \"_world\"", Grant(.read, to: "_world")),
        ("every right", "GRANT READ, CREATE, WRITE TO \"_icloud\"", Grant([.read, .create, .write], to: "_icloud")),
        ("rights in any order", "GRANT WRITE, READ TO \"_creator\"", Grant([.read, .write], to: "_creator")),
        ("custom role", "GRANT CREATE TO moderator", Grant(.create, to: "moderator")),
        ("lower case", "grant read to moderator", Grant(.read, to: "moderator")),
    ]

    @Test(arguments: grants.map(\.0))
    func grantParses(label: String) throws {
        let (_, text, grant) = Self.grants.first { $0.0 == label }!
        let schema = try Schema(parsing: "DEFINE SCHEMA CREATE ROLE moderator; RECORD TYPE T (a STRING, \(text));")
        #expect(schema.recordTypes.first?.grants == [grant])
    }

    @Test func wholeSchemaKeepsDeclarationOrderAndSkipsEveryCommentStyle() throws {
        let text = """
            -- a dashed comment
            DEFINE /* inline */ SCHEMA
                // a slashed comment
                RECORD TYPE "cloudkit.share" ("cloudkit.title" STRING);
                CREATE ROLE editor;
                /* a block
                   over lines */
                RECORD TYPE Note (
                    title STRING QUERYABLE, -- trailing
                    GRANT READ TO editor,
                    body STRING
                );
            """
        let schema = try Schema(parsing: text)
        #expect(schema == Schema(roles: ["editor"], recordTypes: [
            RecordType(name: "cloudkit.share", fields: [Field(name: "cloudkit.title", type: .string)]),
            RecordType(name: "Note", fields: [Field(name: "title", type: .string, options: .queryable), Field(name: "body", type: .string)],
                       grants: [Grant(.read, to: "editor")]),
        ]))
    }

    @Test func emptySchemaAndEmptyRecordTypeParse() throws {
        #expect(try Schema(parsing: "DEFINE SCHEMA") == Schema())
        #expect(try Schema(parsing: "DEFINE SCHEMA RECORD TYPE Empty ();") == Schema(recordTypes: [RecordType(name: "Empty")]))
    }

    @Test func roleMayBeCreatedAfterTheGrantThatNamesIt() throws {
        let schema = try Schema(parsing: "DEFINE SCHEMA RECORD TYPE T (GRANT READ TO late); CREATE ROLE late;")
        #expect(schema.roles == ["late"])
    }

    @Test func systemFieldsAreImplicitOnEveryRecordType() throws {
        let schema = try Schema(parsing: "DEFINE SCHEMA RECORD TYPE T (a STRING);")
        let type = try #require(schema.recordType(named: "T"))
        #expect(type.field(named: "___modTime") == Field(name: "___modTime", type: .timestamp))
        #expect(type.allFields.map(\.name) == ["a", "___createTime", "___createdBy", "___etag", "___modTime", "___modifiedBy", "___recordID"])
    }
}
