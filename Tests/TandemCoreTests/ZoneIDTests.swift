import Testing
import TandemCore

/// The zone ID dictionary: `zoneName` (default zone `_defaultZone`), optional `ownerRecordName`;
/// responses add `zoneType` (CloudKit Web Services: Types, "Zone ID Dictionary").
@Suite struct ZoneIDTests {
    @Test func defaultZoneIsNamedDefaultZone() {
        #expect(ZoneID.defaultZone.zoneName == "_defaultZone")
        #expect(ZoneID.defaultZone.ownerRecordName == nil)
        #expect(ZoneID.defaultZone.isDefaultZone)
        #expect(!ZoneID(zoneName: "Gallery").isDefaultZone)
        #expect(ZoneID(zoneName: "_defaultZone", ownerRecordName: "_owner").isDefaultZone)
    }

    @Test func decodesZoneNameAlone() throws {
        #expect(try RecordCodec.decodeZoneID(json(#"{"zoneName":"_defaultZone"}"#)) == .defaultZone)
    }

    @Test func decodesTheOwnerOfASharedZone() throws {
        let zone = try RecordCodec.decodeZoneID(json(#"{"zoneName":"Gallery","ownerRecordName":"_abc","zoneType":"REGULAR_CUSTOM_ZONE"}"#))
        #expect(zone == ZoneID(zoneName: "Gallery", ownerRecordName: "_abc"))
    }

    @Test func nullOwnerMeansTheCaller() throws {
        #expect(try RecordCodec.decodeZoneID(json(#"{"zoneName":"Gallery","ownerRecordName":null}"#)) == ZoneID(zoneName: "Gallery"))
    }

    @Test func encodesCustomZoneWithOwnerAndType() {
        let text = JSONWriter.string(RecordCodec.encodeZoneID(ZoneID(zoneName: "Gallery", ownerRecordName: "_abc")))
        #expect(text == #"{"zoneName":"Gallery","ownerRecordName":"_abc","zoneType":"REGULAR_CUSTOM_ZONE"}"#)
    }

    @Test func encodesDefaultZoneWithItsType() {
        #expect(JSONWriter.string(RecordCodec.encodeZoneID(.defaultZone)) == #"{"zoneName":"_defaultZone","zoneType":"DEFAULT_ZONE"}"#)
    }

    @Test func encodedZoneDecodesToTheSameZone() throws {
        for zone in [ZoneID.defaultZone, ZoneID(zoneName: "z"), ZoneID(zoneName: "Shared Zone", ownerRecordName: "_0123")] {
            #expect(try RecordCodec.decodeZoneID(RecordCodec.encodeZoneID(zone)) == zone)
        }
    }

    @Test(arguments: [
        (#"["Gallery"]"#, "zoneID must be a dictionary with 'zoneName'"),
        (#"{}"#, "zoneID needs a 'zoneName' string"),
        (#"{"zoneName":7}"#, "zoneID needs a 'zoneName' string"),
        (#"{"zoneName":""}"#, "zoneName must be 1–255 printable ASCII characters"),
        (#"{"zoneName":"caf\u00e9"}"#, "zoneName must be 1–255 printable ASCII characters"),
        (#"{"zoneName":"a\nb"}"#, "zoneName must be 1–255 printable ASCII characters"),
        (#"{"zoneName":"z","ownerRecordName":5}"#, "zoneID 'ownerRecordName' must be a string"),
    ])
    func malformedZoneIDsAreRefused(_ text: String, _ reason: String) {
        let error = refusal { try RecordCodec.decodeZoneID(json(text)) }
        #expect(error?.code == .badRequest)
        #expect(error?.reason == reason)
    }

    @Test func zoneNameOf256CharactersIsRefused() {
        let error = refusal { try RecordCodec.decodeZoneID(.object(["zoneName": .string(String(repeating: "z", count: 256))])) }
        #expect(error?.code == .badRequest)
    }
}
