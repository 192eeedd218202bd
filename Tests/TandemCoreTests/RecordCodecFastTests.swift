import Testing
import TandemCore

/// `encodeForResponse` writes exactly what `encodeRecord` writes.
@Suite struct RecordCodecFastTests {
    static let records: [Record] = [
        Record(recordName: "plain", recordType: "Note", recordChangeTag: "1-1", fields: ["title": .string("Hi \"there\"\n"), "n": .int64(5)],
               zoneID: ZoneID(zoneName: "Z", ownerRecordName: "_owner"),
               created: Record.Stamp(timestamp: 1, userRecordName: "_a", deviceID: "phone"), modified: Record.Stamp(timestamp: 2, userRecordName: "_b")),
        Record(recordName: "kid", recordType: "Note", recordChangeTag: "2-1", fields: [:], zoneID: .defaultZone,
               created: Record.Stamp(timestamp: 3, userRecordName: "_a"), modified: Record.Stamp(timestamp: 4, userRecordName: "_a"),
               parent: "plain", share: "plain-share"),
        Record(recordName: "ünïcode ☃", recordType: "Note", fields: ["list": .list([.double(1.5), .double(-2)], of: .double)]),
        // Timestamps written without String(_:) (E25): zero, negative, both extremes.
        Record(recordName: "stamps", recordType: "Note", recordChangeTag: "3-1", fields: [:], zoneID: ZoneID(zoneName: "custom"),
               created: Record.Stamp(timestamp: 0, userRecordName: "_a"), modified: Record.Stamp(timestamp: -1_234_567_890_123, userRecordName: "_a")),
        Record(recordName: "max", recordType: "Note", fields: [:], zoneID: ZoneID(zoneName: "custom", ownerRecordName: "_o"),
               created: Record.Stamp(timestamp: .max, userRecordName: "_a"), modified: Record.Stamp(timestamp: .min, userRecordName: "_a"),
               share: "s"),
    ]

    @Test(arguments: records)
    func sameBytes(_ record: Record) throws {
        // As read from a store: the stored field text travels with the record.
        var stored = record
        let fields = RecordCodec.encodeRecord(record)["fields"]!
        stored.encodedFields = EncodedFields(JSONFragment(trusted: JSONWriter.bytes(fields)))
        let fast = RecordCodec.encodeForResponse(stored)
        guard case .fragment = fast else { Issue.record("expected the direct path"); return }
        #expect(JSONWriter.bytes(fast) == JSONWriter.bytes(RecordCodec.encodeRecord(stored)))
    }

    @Test func fallsBackWhenFieldsMustBeReshaped() {
        var record = Self.records[0]
        record.encodedFields = EncodedFields(JSONFragment(trusted: JSONWriter.bytes(RecordCodec.encodeRecord(record)["fields"]!)))
        let picked = RecordCodec.encodeForResponse(record, options: .init(desiredKeys: ["title"]))
        #expect(picked["fields"]?["n"] == nil && picked["fields"]?["title"] != nil)
    }
}
