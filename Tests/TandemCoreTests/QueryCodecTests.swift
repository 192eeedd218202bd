import Testing
import TandemCore

/// The query dictionary (`recordType`, `filterBy`, `sortBy`) and the sort descriptor
/// (`fieldName` or `systemFieldName`, `ascending`, `relativeLocation`).
@Suite struct QueryCodecTests {
    @Test func decodesAQueryWithFiltersAndSorts() throws {
        let query = try QueryCodec.decodeQuery(json(#"""
            { "recordType": "Artwork",
              "filterBy": [
                {"fieldName": "title", "comparator": "BEGINS_WITH", "fieldValue": {"value": "Santa"}},
                {"fieldName": "location", "comparator": "NEAR", "fieldValue": {"value": {"latitude": 37.5, "longitude": -122.25}}, "distance": 5000},
                {"systemFieldName": "createdTimestamp", "comparator": "LESS_THAN", "fieldValue": {"value": 1466108400000, "type": "TIMESTAMP"}}
              ],
              "sortBy": [
                {"fieldName": "title", "ascending": false},
                {"systemFieldName": "modifiedTimestamp"},
                {"fieldName": "location", "relativeLocation": {"value": {"latitude": 37.5, "longitude": -122.25}, "type": "LOCATION"}}
              ] }
            """#))
        let here = Location(latitude: 37.5, longitude: -122.25)
        #expect(query == Query(recordType: "Artwork",
                               filters: [Filter(comparator: .beginsWith, field: .user("title"), value: .string("Santa")),
                                         Filter(comparator: .near, field: .user("location"), value: .location(here), distance: 5000),
                                         Filter(comparator: .lessThan, field: .system(.createdTimestamp), value: .timestamp(1_466_108_400_000))],
                               sorts: [Sort(field: .user("title"), ascending: false),
                                       Sort(field: .system(.modifiedTimestamp), ascending: true),
                                       Sort(field: .user("location"), relativeLocation: here)]))
    }

    @Test func queryWithOnlyARecordTypeHasNoFiltersOrSorts() throws {
        #expect(try QueryCodec.decodeQuery(json(#"{"recordType":"Artist"}"#)) == Query(recordType: "Artist"))
        #expect(try QueryCodec.decodeQuery(json(#"{"recordType":"Artist","filterBy":null,"sortBy":null}"#)) == Query(recordType: "Artist"))
        #expect(try QueryCodec.decodeQuery(json(#"{"recordType":"Artist","filterBy":[],"sortBy":[]}"#)) == Query(recordType: "Artist"))
    }

    @Test func shareRecordsCanBeQueried() throws {
        #expect(try QueryCodec.decodeQuery(json(#"{"recordType":"cloudkit.share"}"#)).recordType == "cloudkit.share")
    }

    @Test func sortAscendsByDefault() throws {
        #expect(try QueryCodec.decodeSort(json(#"{"fieldName":"title"}"#)) == Sort(field: .user("title"), ascending: true))
        #expect(try QueryCodec.decodeSort(json(#"{"fieldName":"title","ascending":null}"#)).ascending)
    }

    @Test func sortBySchemaNameIsASystemField() throws {
        #expect(try QueryCodec.decodeSort(json(#"{"fieldName":"___createTime","ascending":false}"#))
                == Sort(field: .system(.createdTimestamp), ascending: false))
    }

    @Test func relativeLocationMayBeABareLocation() throws {
        let sort = try QueryCodec.decodeSort(json(#"{"fieldName":"where","relativeLocation":{"latitude":1.5,"longitude":2.5}}"#))
        #expect(sort.relativeLocation == Location(latitude: 1.5, longitude: 2.5))
    }

    @Test(arguments: [
        (#"[]"#, "'query' must be a dictionary"),
        (#"{}"#, "query needs a 'recordType' string"),
        (#"{"recordType":5}"#, "query needs a 'recordType' string"),
        (#"{"recordType":"1Artist"}"#, "query recordType '1Artist' is not a valid type name"),
        (#"{"recordType":"_Artist"}"#, "query recordType '_Artist' is not a valid type name"),
        (#"{"recordType":"Artist","filterBy":{}}"#, "query 'filterBy' must be an array"),
        (#"{"recordType":"Artist","sortBy":"title"}"#, "query 'sortBy' must be an array"),
        (#"{"recordType":"Artist","filterBy":[{"fieldName":"t","comparator":"LIKE","fieldValue":{"value":1}}]}"#, "unknown comparator 'LIKE'"),
        (#"{"recordType":"Artist","sortBy":[{"ascending":true}]}"#, "sort needs 'fieldName' or 'systemFieldName'"),
    ])
    func malformedQueriesAreRefused(_ text: String, _ reason: String) {
        let error = refusal { try QueryCodec.decodeQuery(json(text)) }
        #expect(error?.code == .badRequest)
        #expect(error?.reason == reason)
    }

    @Test(arguments: [
        (#"[]"#, "each sortBy entry must be a dictionary"),
        (#"{"fieldName":"t","ascending":"no"}"#, "sort 'ascending' must be a boolean"),
        (#"{"fieldName":"t","ascending":0}"#, "sort 'ascending' must be a boolean"),
        (#"{"fieldName":"t-1"}"#, "sort: invalid field name 't-1'"),
        (#"{"systemFieldName":"title"}"#, "sort: unknown systemFieldName 'title' (known: recordName, share, parent, createdUserRecordName, createdTimestamp, modifiedTimestamp, modifiedUserRecordName)"),
        (#"{"fieldName":"w","relativeLocation":{"latitude":91,"longitude":0}}"#,
         "field 'relativeLocation': latitude must be within ±90 and longitude within ±180 degrees"),
    ])
    func malformedSortsAreRefused(_ text: String, _ reason: String) {
        let error = refusal { try QueryCodec.decodeSort(json(text)) }
        #expect(error?.code == .badRequest)
        #expect(error?.reason == reason)
    }

    @Test func queryFieldDescriptionIsItsWireName() {
        #expect(QueryField.user("title").description == "title")
        #expect(QueryField.system(.modifiedTimestamp).description == "modifiedTimestamp")
    }
}
