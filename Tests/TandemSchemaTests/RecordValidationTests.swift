import Testing
import TandemCore
import TandemSchema

/// A record is checked against its record type: the first violation names the type and field.
@Suite struct RecordValidationTests {
    static let schema = try! Schema(parsing: """
        DEFINE SCHEMA
        RECORD TYPE Note (
            "___recordID" REFERENCE QUERYABLE,
            title STRING, stars INT64, score DOUBLE, due TIMESTAMP, tags LIST<STRING>,
            count NUMBER, exact NUMBER PREFERRED AS INT64, secret ENCRYPTED STRING,
            place LOCATION, image ASSET, blob BYTES, owner REFERENCE
        );
        """)

    static let asset = Asset(fileChecksum: "ab", size: 1)

    /// (label, fields, nil when accepted or the expected reason).
    static let cases: [(String, [String: FieldValue], String?)] = [
        ("no fields", [:], nil),
        ("every type", ["title": .string("t"), "stars": .int64(5), "score": .double(1.5), "due": .timestamp(1),
                        "tags": .list([.string("a")], of: .string), "place": .location(Location(latitude: 1, longitude: 2)),
                        "image": .asset(asset), "blob": .bytes([1]), "owner": .reference(Reference(recordName: "r"))], nil),
        ("integer for a double", ["score": .int64(2)], nil),
        ("integer for a timestamp", ["due": .int64(2)], nil),
        ("number takes an integer", ["count": .int64(2)], nil),
        ("number takes a double", ["count": .double(2.5)], nil),
        ("encrypted takes its type", ["secret": .string("s")], nil),
        ("encrypted takes ciphertext", ["secret": .bytes([9])], nil),
        ("unknown field", ["titel": .string("t")], "record type 'Note' has no field 'titel'"),
        ("system field set", ["___recordID": .reference(Reference(recordName: "x"))], "field '___recordID' of record type 'Note' is a system field, set by the server"),
        ("wrong scalar", ["stars": .string("5")], "field 'stars' of record type 'Note' is INT64, not STRING"),
        ("double for an int64", ["stars": .double(1.5)], "field 'stars' of record type 'Note' is INT64, not DOUBLE"),
        ("pinned number refuses a double", ["exact": .double(1.5)], "field 'exact' of record type 'Note' is NUMBER PREFERRED AS INT64, not DOUBLE"),
        ("scalar for a list", ["tags": .string("a")], "field 'tags' of record type 'Note' is LIST<STRING>, not STRING"),
        ("list for a scalar", ["title": .list([.string("a")], of: .string)], "field 'title' of record type 'Note' is STRING, not STRING_LIST"),
        ("list of the wrong element", ["tags": .list([.int64(1)], of: .int64)], "field 'tags' of record type 'Note' is LIST<STRING>, not INT64_LIST"),
        ("first by name", ["zeta": .string("z"), "alpha": .string("a")], "record type 'Note' has no field 'alpha'"),
    ]

    @Test(arguments: cases.map(\.0))
    func recordIsCheckedAgainstItsType(label: String) {
        let (_, fields, reason) = Self.cases.first { $0.0 == label }!
        let violation = Self.schema.violation(in: Record(recordName: "n", recordType: "Note", fields: fields))
        #expect(violation?.reason == reason)
        if let violation {
            #expect(violation.recordType == "Note")
            #expect(violation.field.map { fields[$0] != nil } == true)
        }
    }

    @Test func unknownRecordTypeIsAViolation() {
        let violation = Self.schema.violation(in: Record(recordName: "n", recordType: "Nope"))
        #expect(violation == SchemaViolation(kind: .unknownRecordType, recordType: "Nope", field: nil,
                                             reason: "record type 'Nope' is not in the schema"))
    }
}
