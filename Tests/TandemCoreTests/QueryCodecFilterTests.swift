import Testing
import TandemCore

/// The filter dictionary (CloudKit Web Services: Types, "Filter Dictionary"): `comparator`,
/// `fieldName` or `systemFieldName`, `fieldValue`, and `distance` for NEAR.
@Suite struct QueryCodecFilterTests {
    func filter(_ text: String) throws -> Filter {
        try QueryCodec.decodeFilter(json(text))
    }

    @Test func comparatorsAreExactlyTheDocumentedTwenty() {
        let documented: Set<String> = [
            "EQUALS", "NOT_EQUALS", "LESS_THAN", "LESS_THAN_OR_EQUALS", "GREATER_THAN", "GREATER_THAN_OR_EQUALS", "NEAR",
            "CONTAINS_ALL_TOKENS", "IN", "NOT_IN", "CONTAINS_ANY_TOKENS", "LIST_CONTAINS", "NOT_LIST_CONTAINS",
            "NOT_LIST_CONTAINS_ANY", "BEGINS_WITH", "NOT_BEGINS_WITH", "LIST_MEMBER_BEGINS_WITH",
            "NOT_LIST_MEMBER_BEGINS_WITH", "LIST_CONTAINS_ALL", "NOT_LIST_CONTAINS_ALL",
        ]
        #expect(Comparator.allCases.count == 20)
        #expect(Set(Comparator.allCases.map(\.rawValue)) == documented)
    }

    @Test(arguments: Comparator.allCases)
    func everyComparatorDecodesFromItsWireName(_ comparator: Comparator) throws {
        let decoded: Filter
        let expectedValue: FieldValue
        switch comparator {
        case .near:
            decoded = try filter(#"{"fieldName":"where","comparator":"NEAR","fieldValue":{"value":{"latitude":37.5,"longitude":-122.25}},"distance":100000}"#)
            expectedValue = .location(Location(latitude: 37.5, longitude: -122.25))
        case _ where comparator.takesList:
            decoded = try filter(#"{"fieldName":"tags","comparator":"\#(comparator.rawValue)","fieldValue":{"value":["oil","ink"],"type":"STRING_LIST"}}"#)
            expectedValue = .list([.string("oil"), .string("ink")], of: .string)
        default:
            decoded = try filter(#"{"fieldName":"title","comparator":"\#(comparator.rawValue)","fieldValue":{"value":"Santa"}}"#)
            expectedValue = .string("Santa")
        }
        #expect(decoded.comparator == comparator)
        #expect(decoded.value == expectedValue)
        #expect(decoded.distance == (comparator == .near ? 100_000 : nil))
    }

    @Test func listComparatorsAreTheOnesTakingAList() {
        #expect(Set(Comparator.allCases.filter(\.takesList)) == [.in, .notIn, .notListContainsAny, .listContainsAll, .notListContainsAll])
    }

    @Test func negationsAreTheNotComparators() {
        #expect(Set(Comparator.allCases.filter(\.isNegation)) == Set(Comparator.allCases.filter { $0.rawValue.hasPrefix("NOT_") }))
    }

    @Test func decodesApplesEqualsExample() throws {
        let f = try filter(#"{"fieldName":"title","comparator":"EQUALS","fieldValue":{"value":"Santa Cruz Mountains"}}"#)
        #expect(f == Filter(comparator: .equals, field: .user("title"), value: .string("Santa Cruz Mountains")))
    }

    @Test func inTakesATypedListValue() throws {
        let f = try filter(#"{"fieldName":"width","comparator":"IN","fieldValue":{"value":[18,24],"type":"INT64_LIST"}}"#)
        #expect(f.value == .list([.int64(18), .int64(24)], of: .int64))
    }

    @Test func inWithAnEmptyTypedListIsAnEmptyList() throws {
        let f = try filter(#"{"fieldName":"width","comparator":"NOT_IN","fieldValue":{"value":[],"type":"INT64_LIST"}}"#)
        #expect(f.value == .list([], of: .int64))
    }

    @Test func listComparatorWithAScalarValueWrapsItInAOneElementList() throws {
        let f = try filter(#"{"fieldName":"width","comparator":"IN","fieldValue":{"value":18}}"#)
        #expect(f.value == .list([.int64(18)], of: .int64))
    }

    @Test func nearKeepsDistanceInMetres() throws {
        let f = try filter(#"{"fieldName":"where","comparator":"NEAR","fieldValue":{"value":{"latitude":0,"longitude":0},"type":"LOCATION"},"distance":1.5}"#)
        #expect(f.distance == 1.5)
        #expect(f.field == .user("where"))
    }

    @Test func referenceValueWithoutActionIsAcceptedInFilters() throws {
        let f = try filter(#"{"fieldName":"artist","comparator":"EQUALS","fieldValue":{"value":{"recordName":"Mei Chen"},"type":"REFERENCE"}}"#)
        #expect(f.value == .reference(Reference(recordName: "Mei Chen")))
    }

    static let systemFields: [(schema: String, system: String, field: SystemField)] = [
        ("___recordID", "recordName", .recordName), ("___share", "share", .share), ("___parent", "parent", .parent),
        ("___createdBy", "createdUserRecordName", .createdUserRecordName), ("___createTime", "createdTimestamp", .createdTimestamp),
        ("___modTime", "modifiedTimestamp", .modifiedTimestamp), ("___modifiedBy", "modifiedUserRecordName", .modifiedUserRecordName),
    ]

    @Test(arguments: systemFields)
    func systemFieldsAreNamedBySystemFieldNameOrSchemaName(_ entry: (schema: String, system: String, field: SystemField)) throws {
        #expect(entry.field.rawValue == entry.system)
        #expect(entry.field.schemaName == entry.schema)
        let value = #"{"value":"x"}"#
        let timeValue = #"{"value":5,"type":"TIMESTAMP"}"#
        let fieldValue = entry.field == .createdTimestamp || entry.field == .modifiedTimestamp ? timeValue : value
        for key in [#""systemFieldName":"\#(entry.system)""#, #""fieldName":"\#(entry.schema)""#, #""systemFieldName":"\#(entry.schema)""#] {
            let f = try filter(#"{\#(key),"comparator":"EQUALS","fieldValue":\#(fieldValue)}"#)
            #expect(f.field == .system(entry.field), "\(key)")
        }
        #expect(SystemField.allCases.count == 7)
    }

    @Test func schemaNamesMatchWithoutRegardToCase() throws {
        // The Query page writes ___recordId, the schema language ___recordID.
        let f = try filter(#"{"fieldName":"___recordId","comparator":"EQUALS","fieldValue":{"value":"101"}}"#)
        #expect(f.field == .system(.recordName))
        #expect(f.value == .string("101"))
    }

    @Test func nameSystemFieldsAcceptAReferenceOrUserDictionary() throws {
        let parent = try filter(#"{"systemFieldName":"parent","comparator":"EQUALS","fieldValue":{"value":{"recordName":"p1"},"type":"REFERENCE"}}"#)
        #expect(parent.value == .string("p1"))
        let creator = try filter(#"{"systemFieldName":"createdUserRecordName","comparator":"EQUALS","fieldValue":{"value":{"userRecordName":"_u1"}}}"#)
        #expect(creator.value == .string("_u1"))
    }

    @Test func recordNameInAListOfNames() throws {
        let f = try filter(#"{"systemFieldName":"recordName","comparator":"IN","fieldValue":{"value":["a",{"recordName":"b"}],"type":"STRING_LIST"}}"#)
        #expect(f.value == .list([.string("a"), .string("b")], of: .string))
    }

    @Test func timestampSystemFieldsDecodeTheirValueAsAField() throws {
        let f = try filter(#"{"systemFieldName":"modifiedTimestamp","comparator":"GREATER_THAN","fieldValue":{"value":1466108400000,"type":"TIMESTAMP"}}"#)
        #expect(f.value == .timestamp(1_466_108_400_000))
    }

    @Test(arguments: [
        (#"[]"#, "each filter must be a dictionary"),
        (#"{"fieldName":"t","fieldValue":{"value":1}}"#, "filter needs a 'comparator'"),
        (#"{"fieldName":"t","comparator":"LIKE","fieldValue":{"value":1}}"#, "unknown comparator 'LIKE'"),
        (#"{"fieldName":"t","comparator":"equals","fieldValue":{"value":1}}"#, "unknown comparator 'equals'"),
        (#"{"comparator":"EQUALS","fieldValue":{"value":1}}"#, "filter needs 'fieldName' or 'systemFieldName'"),
        (#"{"fieldName":"t","comparator":"EQUALS"}"#, "filter on 't' needs a 'fieldValue'"),
        (#"{"fieldName":"_t","comparator":"EQUALS","fieldValue":{"value":1}}"#, "filter: invalid field name '_t'"),
        (#"{"fieldName":"___bogus","comparator":"EQUALS","fieldValue":{"value":1}}"#, "filter: unknown system field '___bogus'"),
        (#"{"systemFieldName":"bogus","comparator":"EQUALS","fieldValue":{"value":1}}"#,
         "filter: unknown systemFieldName 'bogus' (known: recordName, share, parent, createdUserRecordName, createdTimestamp, modifiedTimestamp, modifiedUserRecordName)"),
        (#"{"fieldName":"where","comparator":"NEAR","fieldValue":{"value":{"latitude":0,"longitude":0}}}"#,
         "NEAR on 'where' needs a non-negative 'distance' in metres"),
        (#"{"fieldName":"where","comparator":"NEAR","fieldValue":{"value":{"latitude":0,"longitude":0}},"distance":-1}"#,
         "NEAR on 'where' needs a non-negative 'distance' in metres"),
        (#"{"fieldName":"where","comparator":"NEAR","fieldValue":{"value":"Cupertino"},"distance":5}"#, "NEAR on 'where' needs a LOCATION fieldValue"),
        (#"{"systemFieldName":"recordName","comparator":"EQUALS","fieldValue":{"value":5}}"#,
         "filter on recordName needs a name or a reference dictionary"),
        (#"{"fieldName":"w","comparator":"EQUALS","fieldValue":{"value":1.5,"type":"INT64"}}"#,
         "field 'fieldValue': INT64 must be a whole number within 64 bits"),
    ])
    func malformedFiltersAreRefused(_ text: String, _ reason: String) {
        let error = refusal { try filter(text) }
        #expect(error?.code == .badRequest)
        #expect(error?.reason == reason)
    }
}
