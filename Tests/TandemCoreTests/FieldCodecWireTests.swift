import Testing
import TandemCore

/// Every scalar field type, from the wire JSON of a request to a FieldValue and back to the
/// JSON of a response (CloudKit Web Services: Types, "Record Field Dictionary" and the
/// Reference, Location and Asset dictionaries).
@Suite struct FieldCodecWireTests {
    struct WireCase: Sendable, CustomTestStringConvertible {
        let label: String
        /// A field dictionary as a client sends it.
        let request: String
        let value: FieldValue
        /// The same field as the server answers, byte for byte.
        let response: String
        var testDescription: String { label }
    }

    static let zone = ZoneID(zoneName: "Gallery", ownerRecordName: "_0123456789abcdef0123456789abcdef")
    static let zoneJSON = #"{"zoneName":"Gallery","ownerRecordName":"_0123456789abcdef0123456789abcdef","zoneType":"REGULAR_CUSTOM_ZONE"}"#
    static let checksum = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

    static let cases: [WireCase] = [
        WireCase(label: "STRING", request: #"{"value" : "Mei", "type" : "STRING"}"#, value: .string("Mei"),
                 response: #"{"value":"Mei","type":"STRING"}"#),
        WireCase(label: "STRING empty", request: #"{"value":"","type":"STRING"}"#, value: .string(""),
                 response: #"{"value":"","type":"STRING"}"#),
        WireCase(label: "INT64", request: #"{"value": 18, "type": "INT64"}"#, value: .int64(18),
                 response: #"{"value":18,"type":"INT64"}"#),
        WireCase(label: "INT64 negative", request: #"{"value":-24,"type":"INT64"}"#, value: .int64(-24),
                 response: #"{"value":-24,"type":"INT64"}"#),
        WireCase(label: "INT64 written with a zero fraction", request: #"{"value":24.0,"type":"INT64"}"#, value: .int64(24),
                 response: #"{"value":24,"type":"INT64"}"#),
        WireCase(label: "DOUBLE", request: #"{"value":4.25,"type":"DOUBLE"}"#, value: .double(4.25),
                 response: #"{"value":4.25,"type":"DOUBLE"}"#),
        WireCase(label: "DOUBLE given as an integer", request: #"{"value":3,"type":"DOUBLE"}"#, value: .double(3),
                 response: #"{"value":3.0,"type":"DOUBLE"}"#),
        WireCase(label: "TIMESTAMP", request: #"{"value":1466108400000,"type":"TIMESTAMP"}"#, value: .timestamp(1_466_108_400_000),
                 response: #"{"value":1466108400000,"type":"TIMESTAMP"}"#),
        WireCase(label: "TIMESTAMP before 1970", request: #"{"value":-86400000,"type":"TIMESTAMP"}"#, value: .timestamp(-86_400_000),
                 response: #"{"value":-86400000,"type":"TIMESTAMP"}"#),
        WireCase(label: "BYTES", request: #"{"value":"SGVsbG8=","type":"BYTES"}"#, value: .bytes(Array("Hello".utf8)),
                 response: #"{"value":"SGVsbG8=","type":"BYTES"}"#),
        WireCase(label: "BYTES empty", request: #"{"value":"","type":"BYTES"}"#, value: .bytes([]),
                 response: #"{"value":"","type":"BYTES"}"#),
        WireCase(label: "REFERENCE action NONE",
                 request: #"{"value":{"recordName":"Mei Chen","action":"NONE"},"type":"REFERENCE"}"#,
                 value: .reference(Reference(recordName: "Mei Chen")),
                 response: #"{"value":{"recordName":"Mei Chen","action":"NONE"},"type":"REFERENCE"}"#),
        WireCase(label: "REFERENCE without action is NONE",
                 request: #"{"value":{"recordName":"101"},"type":"REFERENCE"}"#,
                 value: .reference(Reference(recordName: "101", action: .none)),
                 response: #"{"value":{"recordName":"101","action":"NONE"},"type":"REFERENCE"}"#),
        WireCase(label: "REFERENCE null action is NONE",
                 request: #"{"value":{"recordName":"101","action":null,"zoneID":null},"type":"REFERENCE"}"#,
                 value: .reference(Reference(recordName: "101")),
                 response: #"{"value":{"recordName":"101","action":"NONE"},"type":"REFERENCE"}"#),
        WireCase(label: "REFERENCE DELETE_SELF with zoneID",
                 request: #"{"value":{"recordName":"101","zoneID":{"zoneName":"Gallery","ownerRecordName":"_0123456789abcdef0123456789abcdef"},"action":"DELETE_SELF"},"type":"REFERENCE"}"#,
                 value: .reference(Reference(recordName: "101", zoneID: zone, action: .deleteSelf)),
                 response: #"{"value":{"recordName":"101","zoneID":"# + zoneJSON + #","action":"DELETE_SELF"},"type":"REFERENCE"}"#),
        WireCase(label: "REFERENCE VALIDATE in the default zone",
                 request: #"{"type":"REFERENCE","value":{"action":"VALIDATE","zoneID":{"zoneName":"_defaultZone"},"recordName":"Artist-1"}}"#,
                 value: .reference(Reference(recordName: "Artist-1", zoneID: .defaultZone, action: .validate)),
                 response: #"{"value":{"recordName":"Artist-1","zoneID":{"zoneName":"_defaultZone","zoneType":"DEFAULT_ZONE"},"action":"VALIDATE"},"type":"REFERENCE"}"#),
        WireCase(label: "LOCATION latitude and longitude only",
                 request: #"{"value":{"latitude":37.3349,"longitude":-122.00902},"type":"LOCATION"}"#,
                 value: .location(Location(latitude: 37.3349, longitude: -122.00902)),
                 response: #"{"value":{"latitude":37.3349,"longitude":-122.00902},"type":"LOCATION"}"#),
        WireCase(label: "LOCATION with every optional key",
                 request: #"{"value":{"timestamp":1466108400000,"course":90.5,"speed":1.25,"altitude":-12.0,"verticalAccuracy":3.5,"horizontalAccuracy":5.0,"longitude":180,"latitude":-90},"type":"LOCATION"}"#,
                 value: .location(Location(latitude: -90, longitude: 180, horizontalAccuracy: 5, verticalAccuracy: 3.5,
                                           altitude: -12, speed: 1.25, course: 90.5, timestamp: 1_466_108_400_000)),
                 response: #"{"value":{"latitude":-90.0,"longitude":180.0,"horizontalAccuracy":5.0,"verticalAccuracy":3.5,"altitude":-12.0,"speed":1.25,"course":90.5,"timestamp":1466108400000},"type":"LOCATION"}"#),
        WireCase(label: "LOCATION optional keys set to null are absent",
                 request: #"{"value":{"latitude":0,"longitude":0,"altitude":null,"timestamp":null},"type":"LOCATION"}"#,
                 value: .location(Location(latitude: 0, longitude: 0)),
                 response: #"{"value":{"latitude":0.0,"longitude":0.0},"type":"LOCATION"}"#),
        WireCase(label: "ASSETID from an upload receipt",
                 request: #"{"value":{"wrappingKey":"a2V5","fileChecksum":"# + "\"\(checksum)\"" + #","receipt":"rcpt-1","referenceChecksum":"cmVm","size":1024},"type":"ASSETID"}"#,
                 value: .asset(Asset(fileChecksum: checksum, size: 1024, referenceChecksum: "cmVm", wrappingKey: "a2V5", receipt: "rcpt-1")),
                 response: #"{"value":{"fileChecksum":"# + "\"\(checksum)\"" + #","size":1024,"referenceChecksum":"cmVm","wrappingKey":"a2V5","receipt":"rcpt-1"},"type":"ASSETID"}"#),
        WireCase(label: "ASSET tag is read as ASSETID",
                 request: #"{"value":{"fileChecksum":"abc","size":0,"receipt":"r"},"type":"ASSET"}"#,
                 value: .asset(Asset(fileChecksum: "abc", size: 0, receipt: "r")),
                 response: #"{"value":{"fileChecksum":"abc","size":0,"receipt":"r"},"type":"ASSETID"}"#),
        WireCase(label: "ASSETID with downloadURL",
                 request: #"{"value":{"fileChecksum":"abc","size":5,"downloadURL":"https://example.test/a/1"},"type":"ASSETID"}"#,
                 value: .asset(Asset(fileChecksum: "abc", size: 5, downloadURL: "https://example.test/a/1")),
                 response: #"{"value":{"fileChecksum":"abc","size":5,"downloadURL":"https://example.test/a/1"},"type":"ASSETID"}"#),
    ]

    @Test(arguments: cases)
    func requestDecodesToTheValue(_ c: WireCase) throws {
        #expect(try decodeField(c.request) == c.value)
    }

    @Test(arguments: cases)
    func valueEncodesToTheExactResponse(_ c: WireCase) {
        #expect(wire(c.value) == c.response)
    }

    @Test(arguments: cases)
    func responseDecodesBackToTheSameValue(_ c: WireCase) throws {
        #expect(try decodeField(c.response) == c.value)
    }

    @Test func fieldTypeNamesTheWireTag() {
        #expect(FieldValue.string("").type.wireName == "STRING")
        #expect(FieldValue.asset(Asset(fileChecksum: "a", size: 0)).type == .scalar(.asset))
        #expect(FieldValue.list([], of: .location).type.wireName == "LOCATION_LIST")
        #expect(FieldType.list(.timestamp).description == "TIMESTAMP_LIST")
    }

    @Test func scalarElementsAreTheValueItself() {
        #expect(FieldValue.int64(1).elements == [.int64(1)])
        #expect(FieldValue.list([.int64(1), .int64(2)], of: .int64).elements == [.int64(1), .int64(2)])
    }
}
