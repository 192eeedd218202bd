import Testing
import TandemCore

/// The record dictionary (CloudKit Web Services: Types, "Record Dictionary"): system keys,
/// `fields`, stamps, `parent`, `share`, `zoneID`, and tombstones.
@Suite struct RecordCodecTests {
    static let zone = ZoneID(zoneName: "Gallery", ownerRecordName: "_owner")
    static let created = Record.Stamp(timestamp: 1_466_108_400_000, userRecordName: "_creator", deviceID: "D1")
    static let modified = Record.Stamp(timestamp: 1_466_108_460_123, userRecordName: "_editor", deviceID: "")

    static var artwork: Record {
        Record(recordName: "101", recordType: "Artwork", recordChangeTag: "e",
               fields: ["title": .string("Santa Cruz Mountains"), "width": .int64(18), "height": .int64(24),
                        "price": .double(99.5), "made": .timestamp(-86_400_000), "thumb": .bytes([1, 2, 3]),
                        "artist": .reference(Reference(recordName: "Mei Chen", zoneID: zone, action: .validate)),
                        "where": .location(Location(latitude: 37.5, longitude: -122.25, timestamp: 5)),
                        "image": .asset(Asset(fileChecksum: "c", size: 3, downloadURL: "https://example.test/1")),
                        "tags": .list([.string("oil")], of: .string), "empty": .list([], of: .reference)],
               zoneID: zone, created: created, modified: modified, parent: "Collection-1", share: "Share-1")
    }

    @Test func encodesEverySystemKeyAndEveryField() throws {
        let expected = try json(#"""
        {"recordName":"101","recordType":"Artwork","recordChangeTag":"e",
         "fields":{
           "artist":{"value":{"recordName":"Mei Chen","zoneID":{"zoneName":"Gallery","ownerRecordName":"_owner","zoneType":"REGULAR_CUSTOM_ZONE"},"action":"VALIDATE"},"type":"REFERENCE"},
           "empty":{"value":[],"type":"REFERENCE_LIST"},
           "height":{"value":24,"type":"INT64"},
           "image":{"value":{"fileChecksum":"c","size":3,"downloadURL":"https://example.test/1"},"type":"ASSETID"},
           "made":{"value":-86400000,"type":"TIMESTAMP"},
           "price":{"value":99.5,"type":"DOUBLE"},
           "tags":{"value":["oil"],"type":"STRING_LIST"},
           "thumb":{"value":"AQID","type":"BYTES"},
           "title":{"value":"Santa Cruz Mountains","type":"STRING"},
           "where":{"value":{"latitude":37.5,"longitude":-122.25,"timestamp":5},"type":"LOCATION"},
           "width":{"value":18,"type":"INT64"}},
         "pluginFields":{},
         "created":{"timestamp":1466108400000,"userRecordName":"_creator","deviceID":"D1"},
         "modified":{"timestamp":1466108460123,"userRecordName":"_editor","deviceID":""},
         "parent":{"recordName":"Collection-1"},
         "share":{"recordName":"Share-1","zoneID":{"zoneName":"Gallery","ownerRecordName":"_owner","zoneType":"REGULAR_CUSTOM_ZONE"}},
         "zoneID":{"zoneName":"Gallery","ownerRecordName":"_owner","zoneType":"REGULAR_CUSTOM_ZONE"}}
        """#)
        #expect(RecordCodec.encodeRecord(Self.artwork) == expected)
    }

    @Test func fieldsAreWrittenInNameOrder() {
        let fields = RecordCodec.encodeRecord(Self.artwork)["fields"]?.objectValue
        #expect(fields?.keys == ["artist", "empty", "height", "image", "made", "price", "tags", "thumb", "title", "where", "width"])
    }

    @Test func encodedRecordDecodesToTheSameRecord() throws {
        #expect(try RecordCodec.decodeRecord(RecordCodec.encodeRecord(Self.artwork)) == Self.artwork)
        let text = JSONWriter.string(RecordCodec.encodeRecord(Self.artwork))
        #expect(try RecordCodec.decodeRecord(json(text)) == Self.artwork)
    }

    @Test func minimalRecordHasNoOptionalKeys() throws {
        let record = Record(recordName: "r", recordType: "T")
        let text = JSONWriter.string(RecordCodec.encodeRecord(record))
        #expect(text == #"{"recordName":"r","recordType":"T","fields":{},"pluginFields":{},"zoneID":{"zoneName":"_defaultZone","zoneType":"DEFAULT_ZONE"}}"#)
        #expect(try RecordCodec.decodeRecord(json(text)) == record)
    }

    @Test func tombstoneCarriesDeletedAndNoFields() throws {
        let record = Record(recordName: "gone", recordType: "Artwork", recordChangeTag: "9", fields: ["title": .string("x")],
                            zoneID: Self.zone, deleted: true)
        let encoded = RecordCodec.encodeRecord(record)
        #expect(encoded == (try json(#"""
            {"recordName":"gone","recordType":"Artwork","recordChangeTag":"9","deleted":true,
             "zoneID":{"zoneName":"Gallery","ownerRecordName":"_owner","zoneType":"REGULAR_CUSTOM_ZONE"}}
            """#)))
        let back = try RecordCodec.decodeRecord(encoded)
        #expect(back.deleted)
        #expect(back.fields.isEmpty)
        #expect(back.recordChangeTag == "9")
    }

    @Test func decodesApplesCreateExample() throws {
        // records/modify "Creating Records" (the archived page omits the comma after "fields").
        let record = try RecordCodec.decodeRecord(json(#"""
            { "recordType" : "Artist",
              "fields" : { "firstName" : {"value" : "Mei"}, "lastName" : {"value" : "Chen"} },
              "recordName" : "Mei Chen" }
            """#))
        #expect(record == Record(recordName: "Mei Chen", recordType: "Artist",
                                 fields: ["firstName": .string("Mei"), "lastName": .string("Chen")]))
    }

    @Test func decodesApplesUpdateExample() throws {
        let record = try RecordCodec.decodeRecord(json(#"""
            { "fields" : { "width": {"value": 18}, "height": {"value": 24} },
              "recordName" : "101", "recordChangeTag" : "e" }
            """#))
        #expect(record.recordName == "101")
        #expect(record.recordType == "")
        #expect(record.recordChangeTag == "e")
        #expect(record.fields == ["width": .int64(18), "height": .int64(24)])
        #expect(record.zoneID == .defaultZone)
    }

    @Test func stampsEncodeAllThreeKeys() {
        #expect(JSONWriter.string(RecordCodec.encodeStamp(Self.created))
                == #"{"timestamp":1466108400000,"userRecordName":"_creator","deviceID":"D1"}"#)
    }

    @Test func stampWithoutDeviceIDDecodesWithAnEmptyOne() throws {
        #expect(RecordCodec.decodeStamp(try json(#"{"timestamp":5,"userRecordName":"_u"}"#))
                == Record.Stamp(timestamp: 5, userRecordName: "_u", deviceID: ""))
    }

    @Test func stampWithoutTimestampOrUserIsNil() throws {
        #expect(RecordCodec.decodeStamp(try json(#"{"userRecordName":"_u"}"#)) == nil)
        #expect(RecordCodec.decodeStamp(try json(#"{"timestamp":5}"#)) == nil)
        #expect(RecordCodec.decodeStamp(try json(#"{"timestamp":1.5,"userRecordName":"_u"}"#)) == nil)
    }

    @Test func parentAndShareAreReadFromTheirRecordNames() throws {
        let record = try RecordCodec.decodeRecord(json(#"{"recordName":"c","recordType":"T","parent":{"recordName":"p"},"share":{"recordName":"s"}}"#))
        #expect(record.parent == "p")
        #expect(record.share == "s")
    }

    @Test(arguments: [
        (#"["r"]"#, "record must be a dictionary"),
        (#"{"recordType":"T"}"#, "record needs 'recordName'"),
        (#"{"recordName":"r","fields":{"w":{"value":1.5,"type":"INT64"}}}"#, "field 'w': INT64 must be a whole number within 64 bits"),
        (#"{"recordName":"r","zoneID":{"zoneName":""}}"#, "zoneName must be 1–255 printable ASCII characters"),
    ])
    func malformedRecordsAreRefused(_ text: String, _ reason: String) {
        let error = refusal { try RecordCodec.decodeRecord(json(text)) }
        #expect(error?.code == .badRequest)
        #expect(error?.reason == reason)
    }
}
