import Testing
import TandemCore

/// `type` is optional on requests: the codec infers it from the value, as in Apple's
/// records/modify examples (`"firstName": {"value": "Mei"}`, `"width": {"value": 18}`).
@Suite struct FieldCodecInferenceTests {
    struct Inferred: Sendable, CustomTestStringConvertible {
        let request: String
        let value: FieldValue
        var testDescription: String { request }
    }

    @Test(arguments: [
        Inferred(request: #"{"value" : "Mei"}"#, value: .string("Mei")),
        Inferred(request: #"{"value": 18}"#, value: .int64(18)),
        Inferred(request: #"{"value": 2.5}"#, value: .double(2.5)),
        Inferred(request: #"{"value": 1.0}"#, value: .double(1.0)),
        Inferred(request: #"{"value": 1e3}"#, value: .double(1000)),
        Inferred(request: #"{"value":{"recordName":"Mei Chen"}}"#, value: .reference(Reference(recordName: "Mei Chen"))),
        Inferred(request: #"{"value":{"recordName":"r","action":"VALIDATE"}}"#, value: .reference(Reference(recordName: "r", action: .validate))),
        Inferred(request: #"{"value":{"latitude":37.5,"longitude":-122.25}}"#, value: .location(Location(latitude: 37.5, longitude: -122.25))),
        Inferred(request: #"{"value":{"fileChecksum":"c","size":3}}"#, value: .asset(Asset(fileChecksum: "c", size: 3))),
        Inferred(request: #"{"value":{"receipt":"r","fileChecksum":"c","size":3}}"#, value: .asset(Asset(fileChecksum: "c", size: 3, receipt: "r"))),
        Inferred(request: #"{"value":["a","b"]}"#, value: .list([.string("a"), .string("b")], of: .string)),
        Inferred(request: #"{"value":[1,2]}"#, value: .list([.int64(1), .int64(2)], of: .int64)),
        Inferred(request: #"{"value":[1.5,2]}"#, value: .list([.double(1.5), .double(2)], of: .double)),
        Inferred(request: #"{"value":[{"recordName":"a"}]}"#, value: .list([.reference(Reference(recordName: "a"))], of: .reference)),
        Inferred(request: #"{"value":[{"latitude":1,"longitude":2}]}"#, value: .list([.location(Location(latitude: 1, longitude: 2))], of: .location)),
        Inferred(request: #"{"value":[{"fileChecksum":"c","size":1}]}"#, value: .list([.asset(Asset(fileChecksum: "c", size: 1))], of: .asset)),
        Inferred(request: #"{"value":["x"],"type":"LIST"}"#, value: .list([.string("x")], of: .string)),
        Inferred(request: #"{"value":[7],"type":"LIST"}"#, value: .list([.int64(7)], of: .int64)),
    ])
    func typeIsInferredFromTheValue(_ c: Inferred) throws {
        #expect(try decodeField(c.request) == c.value)
    }

    @Test func anIntegerWithoutTypeIsInt64NotTimestamp() throws {
        #expect(try decodeField(#"{"value":1466108400000}"#).type == .scalar(.int64))
    }

    @Test func aStringWithoutTypeIsStringNotBytes() throws {
        #expect(try decodeField(#"{"value":"SGVsbG8="}"#) == .string("SGVsbG8="))
    }

    @Test func aListTakesItsFirstElementsType() {
        let error = fieldRefusal(#"{"value":["a",1]}"#)
        #expect(error?.code == .badRequest)
        #expect(error?.reason == "field 'f[1]': value of type STRING expected, found a number")
    }

    @Test func aNumberListWithAFractionAnywhereIsADoubleList() throws {
        // JavaScript writes 2.0 as 2, so CloudKit JS sends a DOUBLE_LIST as [1,2.5]. The element
        // type must not depend on which number comes first: [2.5,1] already decodes.
        #expect(try decodeField(#"{"value":[2.5,1]}"#) == .list([.double(2.5), .double(1)], of: .double))
        #expect(try decodeField(#"{"value":[1,2.5]}"#) == .list([.double(1), .double(2.5)], of: .double))
    }

    @Test func aNullTypeIsInferredLikeAnAbsentOne() throws {
        // Every other optional key of these dictionaries (action, zoneID, ownerRecordName, the
        // optional location keys) treats null as absent.
        #expect(try decodeField(#"{"value":"Mei","type":null}"#) == .string("Mei"))
    }

    @Test func aDeclaredTypeWinsOverInference() throws {
        #expect(try decodeField(#"{"value":1466108400000,"type":"TIMESTAMP"}"#) == .timestamp(1_466_108_400_000))
        #expect(try decodeField(#"{"value":"SGk=","type":"BYTES"}"#) == .bytes(Array("Hi".utf8)))
        #expect(try decodeField(#"{"value":5,"type":"DOUBLE"}"#) == .double(5))
    }

    @Test(arguments: [
        ("ASSET", FieldType.scalar(.asset)), ("ASSETID", .scalar(.asset)), ("ASSET_LIST", .list(.asset)),
        ("ASSETID_LIST", .list(.asset)), ("NUMBER_INT64", .scalar(.int64)), ("NUMBER_DOUBLE", .scalar(.double)),
        ("ENCRYPTED_BYTES", .scalar(.bytes)), ("NUMBER_INT64_LIST", .list(.int64)),
        ("STRING", .scalar(.string)), ("TIMESTAMP_LIST", .list(.timestamp)),
    ])
    func wireTagAliasesMapToOneType(_ tag: String, _ type: FieldType) {
        #expect(FieldType(wireName: tag) == type)
    }

    @Test(arguments: ["LIST", "STRINGS", "string", "BOOLEAN", "_LIST", "STRING_LIST_LIST", "", "INT32", "REFERENCE "])
    func unknownWireTagsAreNil(_ tag: String) {
        #expect(FieldType(wireName: tag) == nil)
    }

    @Test(arguments: FieldType.ScalarType.allCases)
    func everyTypeSpellsItsWireTagBothWays(_ scalar: FieldType.ScalarType) {
        #expect(FieldType(wireName: FieldType.scalar(scalar).wireName) == .scalar(scalar))
        #expect(FieldType(wireName: FieldType.list(scalar).wireName) == .list(scalar))
    }

    @Test func encryptedBytesDecodeAsBytesAndAreAnsweredAsBytes() throws {
        let value = try decodeField(#"{"value":"AAE=","type":"ENCRYPTED_BYTES"}"#)
        #expect(value == .bytes([0, 1]))
        #expect(wire(value) == #"{"value":"AAE=","type":"BYTES"}"#)
    }
}
