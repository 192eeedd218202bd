import Testing
import TandemCore

/// The `*_LIST` field types: JSON arrays whose element type is the list's, empty lists
/// included (an empty list keeps its type so it round-trips).
@Suite struct FieldCodecListTests {
    struct ListCase: Sendable, CustomTestStringConvertible {
        let request: String
        let value: FieldValue
        let response: String
        var testDescription: String { value.type.wireName }
    }

    static let cases: [ListCase] = [
        ListCase(request: #"{"value":["oil","canvas"],"type":"STRING_LIST"}"#,
                 value: .list([.string("oil"), .string("canvas")], of: .string),
                 response: #"{"value":["oil","canvas"],"type":"STRING_LIST"}"#),
        ListCase(request: #"{"value":[18,24,-9223372036854775808],"type":"INT64_LIST"}"#,
                 value: .list([.int64(18), .int64(24), .int64(Int64.min)], of: .int64),
                 response: #"{"value":[18,24,-9223372036854775808],"type":"INT64_LIST"}"#),
        ListCase(request: #"{"value":[1.5,2,-0.25],"type":"DOUBLE_LIST"}"#,
                 value: .list([.double(1.5), .double(2), .double(-0.25)], of: .double),
                 response: #"{"value":[1.5,2.0,-0.25],"type":"DOUBLE_LIST"}"#),
        ListCase(request: #"{"value":[0,1466108400000],"type":"TIMESTAMP_LIST"}"#,
                 value: .list([.timestamp(0), .timestamp(1_466_108_400_000)], of: .timestamp),
                 response: #"{"value":[0,1466108400000],"type":"TIMESTAMP_LIST"}"#),
        ListCase(request: #"{"value":["AA==","/w==",""],"type":"BYTES_LIST"}"#,
                 value: .list([.bytes([0]), .bytes([255]), .bytes([])], of: .bytes),
                 response: #"{"value":["AA==","/w==",""],"type":"BYTES_LIST"}"#),
        ListCase(request: #"{"value":[{"recordName":"a"},{"recordName":"b","action":"DELETE_SELF"}],"type":"REFERENCE_LIST"}"#,
                 value: .list([.reference(Reference(recordName: "a")), .reference(Reference(recordName: "b", action: .deleteSelf))],
                              of: .reference),
                 response: #"{"value":[{"recordName":"a","action":"NONE"},{"recordName":"b","action":"DELETE_SELF"}],"type":"REFERENCE_LIST"}"#),
        ListCase(request: #"{"value":[{"latitude":1.5,"longitude":2.5},{"latitude":-3.5,"longitude":4.5,"speed":2.0}],"type":"LOCATION_LIST"}"#,
                 value: .list([.location(Location(latitude: 1.5, longitude: 2.5)),
                               .location(Location(latitude: -3.5, longitude: 4.5, speed: 2))], of: .location),
                 response: #"{"value":[{"latitude":1.5,"longitude":2.5},{"latitude":-3.5,"longitude":4.5,"speed":2.0}],"type":"LOCATION_LIST"}"#),
        ListCase(request: #"{"value":[{"fileChecksum":"c1","size":1,"receipt":"r1"},{"fileChecksum":"c2","size":2,"receipt":"r2"}],"type":"ASSETID_LIST"}"#,
                 value: .list([.asset(Asset(fileChecksum: "c1", size: 1, receipt: "r1")),
                               .asset(Asset(fileChecksum: "c2", size: 2, receipt: "r2"))], of: .asset),
                 response: #"{"value":[{"fileChecksum":"c1","size":1,"receipt":"r1"},{"fileChecksum":"c2","size":2,"receipt":"r2"}],"type":"ASSETID_LIST"}"#),
        ListCase(request: #"{"value":[{"fileChecksum":"c1","size":1}],"type":"ASSET_LIST"}"#,
                 value: .list([.asset(Asset(fileChecksum: "c1", size: 1))], of: .asset),
                 response: #"{"value":[{"fileChecksum":"c1","size":1}],"type":"ASSETID_LIST"}"#),
    ]

    @Test(arguments: cases)
    func listRequestDecodes(_ c: ListCase) throws {
        #expect(try decodeField(c.request) == c.value)
    }

    @Test(arguments: cases)
    func listEncodesToTheExactResponse(_ c: ListCase) throws {
        #expect(wire(c.value) == c.response)
        #expect(try decodeField(c.response) == c.value)
    }

    @Test(arguments: FieldType.ScalarType.allCases)
    func emptyListWithATypeRoundTripsWithItsType(_ element: FieldType.ScalarType) throws {
        let text = #"{"value":[],"type":"\#(element.rawValue)_LIST"}"#
        let value = try decodeField(text)
        #expect(value == .list([], of: element))
        #expect(value.type == .list(element))
        #expect(wire(value) == text)
    }

    @Test func emptyListsOfDifferentTypesAreDifferentValues() {
        #expect(FieldValue.list([], of: .string) != .list([], of: .int64))
    }

    @Test func listElementErrorsNameTheIndex() {
        let error = fieldRefusal(#"{"value":["a",2],"type":"STRING_LIST"}"#, name: "tags")
        #expect(error?.code == .badRequest)
        #expect(error?.reason == "field 'tags[1]': value of type STRING expected, found a number")
    }

    @Test func listTypeNeedsAnArray() {
        let error = fieldRefusal(#"{"value":"a","type":"STRING_LIST"}"#)
        #expect(error?.code == .badRequest)
        #expect(error?.reason == "field 'f': type STRING_LIST needs an array, found a string")
    }

    @Test func scalarTypeRefusesAnArray() {
        let error = fieldRefusal(#"{"value":["a"],"type":"STRING"}"#)
        #expect(error?.code == .badRequest)
        #expect(error?.reason == "field 'f': value of type STRING expected, found an array")
    }

    @Test func listsOfListsAreRefused() {
        let error = fieldRefusal(#"{"value":[[1]]}"#)
        #expect(error?.code == .badRequest)
        #expect(error?.reason.contains("lists of lists are not supported") == true)
    }
}
