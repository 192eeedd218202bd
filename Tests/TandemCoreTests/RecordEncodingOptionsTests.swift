import Testing
import TandemCore

/// Response options for records: `desiredKeys` trimming, `numbersAsStrings`, and asset
/// `downloadURL`s (CloudKit Web Services: records/modify, query, lookup).
@Suite struct RecordEncodingOptionsTests {
    static let receiptAsset = Asset(fileChecksum: "c1", size: 10, referenceChecksum: "rc", wrappingKey: "wk", receipt: "rcpt")

    static var record: Record {
        Record(recordName: "101", recordType: "Artwork", recordChangeTag: "e",
               fields: ["title": .string("Mountains"), "width": .int64(18), "price": .double(2.5),
                        "image": .asset(receiptAsset),
                        "gallery": .list([.asset(Asset(fileChecksum: "c2", size: 2, receipt: "r2")),
                                          .asset(Asset(fileChecksum: "c3", size: 3, receipt: "r3"))], of: .asset)],
               created: Record.Stamp(timestamp: 1, userRecordName: "_u"))
    }

    func fieldNames(_ options: RecordCodec.EncodingOptions) -> [String]? {
        RecordCodec.encodeRecord(Self.record, options: options)["fields"]?.objectValue?.keys
    }

    @Test func withoutDesiredKeysEveryFieldIsReturned() {
        #expect(fieldNames(.init()) == ["gallery", "image", "price", "title", "width"])
    }

    @Test func desiredKeysKeepOnlyTheNamedFields() {
        #expect(fieldNames(.init(desiredKeys: ["width", "title", "missing"])) == ["title", "width"])
    }

    @Test func emptyDesiredKeysReturnOnlySystemFields() {
        let encoded = RecordCodec.encodeRecord(Self.record, options: .init(desiredKeys: []))
        #expect(encoded["fields"] == .object(JSONObject()))
        #expect(encoded["recordName"] == "101")
        #expect(encoded["recordType"] == "Artwork")
        #expect(encoded["recordChangeTag"] == "e")
        #expect(encoded["created"]?["userRecordName"] == "_u")
        #expect(encoded["zoneID"]?["zoneName"] == "_defaultZone")
    }

    @Test func numbersAsStringsAppliesToFieldValues() {
        let encoded = RecordCodec.encodeRecord(Self.record, options: .init(desiredKeys: ["width", "price"], numbersAsStrings: true))
        #expect(encoded["fields"]?["width"] == ["value": "18", "type": "INT64"])
        #expect(encoded["fields"]?["price"] == ["value": "2.5", "type": "DOUBLE"])
    }

    @Test func downloadURLReplacesTheReceiptOnScalarAndListAssets() {
        let options = RecordCodec.EncodingOptions { record, field, asset in
            "https://assets.test/\(record.recordName)/\(field)/\(asset.fileChecksum)"
        }
        let fields = RecordCodec.encodeRecord(Self.record, options: options)["fields"]
        #expect(fields?["image"] == ["value": ["fileChecksum": "c1", "size": 10, "referenceChecksum": "rc", "wrappingKey": "wk",
                                               "downloadURL": "https://assets.test/101/image/c1"], "type": "ASSETID"])
        #expect(fields?["gallery"] == ["value": [["fileChecksum": "c2", "size": 2, "downloadURL": "https://assets.test/101/gallery/c2"],
                                                 ["fileChecksum": "c3", "size": 3, "downloadURL": "https://assets.test/101/gallery/c3"]],
                                       "type": "ASSETID_LIST"])
        #expect(fields?["title"] == ["value": "Mountains", "type": "STRING"])
    }

    @Test func downloadURLCallbackReturningNilStillDropsTheReceipt() {
        let options = RecordCodec.EncodingOptions(desiredKeys: ["image"]) { _, _, _ in nil }
        let image = RecordCodec.encodeRecord(Self.record, options: options)["fields"]?["image"]
        #expect(image == ["value": ["fileChecksum": "c1", "size": 10, "referenceChecksum": "rc", "wrappingKey": "wk"], "type": "ASSETID"])
    }

    @Test func downloadURLIsNotAskedForTrimmedFields() {
        let options = RecordCodec.EncodingOptions(desiredKeys: ["title"]) { _, field, _ in
            Issue.record("asked for a URL for trimmed field \(field)")
            return nil
        }
        #expect(RecordCodec.encodeRecord(Self.record, options: options)["fields"]?.objectValue?.keys == ["title"])
    }

    @Test func serverRecordStaysUnchanged() {
        let before = Self.record
        _ = RecordCodec.encodeRecord(before, options: .init(desiredKeys: []) { _, _, _ in "u" })
        #expect(before == Self.record)
    }
}
