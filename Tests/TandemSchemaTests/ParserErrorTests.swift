import Testing
import TandemSchema

/// Each way a file can be wrong gives `FILE:LINE:COLUMN: message` at the offending token.
@Suite struct ParserErrorTests {
    /// (label, text, "line:column: message").
    static let cases: [(String, String, String)] = [
        // Syntax: expected / found.
        ("empty file", "", "1:1: expected DEFINE SCHEMA, found end of file"),
        ("missing SCHEMA", "DEFINE\nRECORD", "2:1: expected SCHEMA, found 'RECORD'"),
        ("unknown statement", "DEFINE SCHEMA\n  TABLE x;", "2:3: expected CREATE ROLE, RECORD TYPE or end of file, found 'TABLE'"),
        ("missing semicolon", "DEFINE SCHEMA RECORD TYPE T (a STRING)\nRECORD TYPE U (b STRING);", "2:1: expected ';', found 'RECORD'"),
        ("missing TYPE", "DEFINE SCHEMA RECORD T (a STRING);", "1:22: expected TYPE, found 'T'"),
        ("missing parenthesis", "DEFINE SCHEMA RECORD TYPE T a STRING;", "1:29: expected '(', found 'a'"),
        ("misspelt type", "DEFINE SCHEMA RECORD TYPE T (\n    a STRNG);",
         "2:7: expected a type (ASSET, BYTES, DOUBLE, INT64, LOCATION, REFERENCE, STRING, TIMESTAMP, LIST<...>, ENCRYPTED ..., NUMBER), found 'STRNG'"),
        ("missing type", "DEFINE SCHEMA RECORD TYPE T (a, b STRING);", "1:31: expected a type (ASSET, BYTES, DOUBLE, INT64, LOCATION, REFERENCE, STRING, TIMESTAMP, LIST<...>, ENCRYPTED ..., NUMBER), found ','"),
        ("unknown option", "DEFINE SCHEMA RECORD TYPE T (a STRING INDEXED);", "1:39: expected ',' or ')', found 'INDEXED'"),
        ("trailing comma", "DEFINE SCHEMA RECORD TYPE T (a STRING,);", "1:39: expected a field name or GRANT, found ')'"),
        ("unclosed list", "DEFINE SCHEMA RECORD TYPE T (a LIST<STRING);", "1:43: expected '>', found ')'"),
        ("nested list", "DEFINE SCHEMA RECORD TYPE T (a LIST<LIST<STRING>>);", "1:37: lists do not nest: LIST<LIST<...>> is not a type"),
        ("encrypted asset", "DEFINE SCHEMA RECORD TYPE T (a ENCRYPTED ASSET);", "1:42: expected BYTES, STRING, DOUBLE, INT64, LOCATION, TIMESTAMP after ENCRYPTED, found 'ASSET'"),
        ("preferred as string", "DEFINE SCHEMA RECORD TYPE T (a NUMBER PREFERRED AS STRING);", "1:52: expected INT64 or DOUBLE after PREFERRED AS, found 'STRING'"),
        ("preferred without as", "DEFINE SCHEMA RECORD TYPE T (a NUMBER PREFERRED INT64);", "1:49: expected AS, found 'INT64'"),
        ("grant without rights", "DEFINE SCHEMA RECORD TYPE T (GRANT TO \"_world\");", "1:36: expected READ, CREATE or WRITE, found 'TO'"),
        ("grant without TO", "DEFINE SCHEMA RECORD TYPE T (GRANT READ \"_world\");", "1:41: expected TO, found '\"_world\"'"),
        ("unknown right", "DEFINE SCHEMA RECORD TYPE T (GRANT DELETE TO \"_world\");", "1:36: expected READ, CREATE or WRITE, found 'DELETE'"),
        ("end inside a record type", "DEFINE SCHEMA RECORD TYPE T (a STRING", "1:38: expected ',' or ')', found end of file"),
        ("stray character", "DEFINE SCHEMA RECORD TYPE T (a STRING = 1);", "1:39: expected a name, a keyword or one of ( ) , ; < >, found '='"),
        ("stray non-ASCII character", "DEFINE SCHEMA\n  é", "2:3: expected a name, a keyword or one of ( ) , ; < >, found 'é'"),
        ("unclosed quote", "DEFINE SCHEMA RECORD TYPE \"T (a STRING);", "1:27: quoted name is not closed with '\"' on its line"),
        ("empty quote", "DEFINE SCHEMA RECORD TYPE \"\" (a STRING);", "1:27: a quoted name cannot be empty"),
        ("unclosed block comment", "DEFINE SCHEMA\n/* never\nclosed", "2:1: comment '/*' is never closed with '*/'"),
        ("second DEFINE SCHEMA", "DEFINE SCHEMA\nDEFINE SCHEMA", "2:1: expected CREATE ROLE, RECORD TYPE or end of file, found 'DEFINE'"),
        // Names.
        ("bare reserved word", "DEFINE SCHEMA RECORD TYPE T (sortable STRING);", "1:30: 'sortable' is a reserved word; write it in double quotes to use it as a field name or GRANT"),
        ("bare underscore name", "DEFINE SCHEMA RECORD TYPE T (a STRING, GRANT READ TO _world);", "1:54: '_world' starts with '_', which only system names do; write it in double quotes"),
        ("underscore record type", "DEFINE SCHEMA RECORD TYPE \"_T\" (a STRING);", "1:27: record type '_T' starts with '_', which is reserved for the system"),
        ("unknown system field", "DEFINE SCHEMA RECORD TYPE T (\"___owner\" STRING);",
         "1:30: field '___owner' in record type 'T' starts with '_', which is reserved for the system fields (___createTime, ___createdBy, ___etag, ___modTime, ___modifiedBy, ___recordID)"),
        ("system field retyped", "DEFINE SCHEMA RECORD TYPE T (\"___etag\" INT64);", "1:40: system field '___etag' is STRING, not INT64"),
        // Rules.
        ("duplicate record type", "DEFINE SCHEMA RECORD TYPE T (a STRING);\nRECORD TYPE T (b STRING);", "2:13: record type 'T' is defined twice"),
        ("duplicate field", "DEFINE SCHEMA RECORD TYPE T (a STRING,\n a INT64);", "2:2: field 'a' is defined twice in record type 'T'"),
        ("duplicate option", "DEFINE SCHEMA RECORD TYPE T (a STRING QUERYABLE QUERYABLE);", "1:49: QUERYABLE is given twice for field 'a'"),
        ("searchable number", "DEFINE SCHEMA RECORD TYPE T (a INT64 SEARCHABLE);", "1:38: field 'a' is INT64: only STRING and LIST<STRING> fields can be SEARCHABLE"),
        ("indexed encrypted field", "DEFINE SCHEMA RECORD TYPE T (a ENCRYPTED STRING QUERYABLE);", "1:49: field 'a' is ENCRYPTED STRING: encrypted fields cannot be QUERYABLE"),
        ("unknown role", "DEFINE SCHEMA RECORD TYPE T (a STRING,\n GRANT READ TO editors);", "2:16: GRANT names role 'editors', which is neither built in nor created with CREATE ROLE (known: _creator, _icloud, _world)"),
        ("duplicate role", "DEFINE SCHEMA CREATE ROLE r; CREATE ROLE r;", "1:42: role 'r' is created twice"),
        ("built-in role created", "DEFINE SCHEMA CREATE ROLE \"_world\";", "1:27: role '_world' is built in and cannot be created"),
        ("underscore role created", "DEFINE SCHEMA CREATE ROLE \"_staff\";", "1:27: role '_staff' starts with '_', which is reserved for the built-in roles"),
    ]

    @Test(arguments: cases.map(\.0))
    func badSchemaIsRefusedWithLineAndColumn(label: String) {
        let (_, text, expected) = Self.cases.first { $0.0 == label }!
        let error = #expect(throws: SchemaError.self) { try Schema(parsing: text, file: "bad.ckdb") }
        #expect(error?.description == "bad.ckdb:" + expected)
    }

    @Test func syntaxErrorCarriesExpectedAndFound() {
        let error = #expect(throws: SchemaError.self) { try Schema(parsing: "DEFINE SCHEMA RECORD TYPE T (a STRING INDEXED);", file: "x.ckdb") }
        #expect(error?.file == "x.ckdb")
        #expect(error?.line == 1)
        #expect(error?.column == 39)
        #expect(error?.expected == "',' or ')'")
        #expect(error?.found == "'INDEXED'")
    }

    @Test func columnsCountCharactersNotBytes() {
        let error = #expect(throws: SchemaError.self) { try Schema(parsing: "DEFINE SCHEMA RECORD TYPE \"Über\" (a BOGUS);") }
        #expect(error?.column == 37)
    }
}
