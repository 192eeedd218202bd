/// Responses with many records (change feeds, lookups, queries) write a record whose stored
/// field JSON can be copied as is straight to bytes, without building a dictionary tree first.
extension RecordCodec {
    /// The record as `encodeRecord` would write it. When the stored fields can be copied (no
    /// `desiredKeys`, no `numbersAsStrings`, no asset needing a download URL, not a share or a
    /// tombstone), the dictionary is written directly and returned as one fragment.
    public static func encodeForResponse(_ record: Record, options: EncodingOptions = EncodingOptions()) -> JSONValue {
        guard let stored = record.encodedFields, !record.deleted, record.sharing == nil, options.desiredKeys == nil,
              !options.numbersAsStrings, options.assetDownloadURL == nil || !record.fields.values.contains(where: \.holdsAsset) else {
            return encodeRecord(record, options: options)
        }
        var out: [UInt8] = []
        out.reserveCapacity(stored.fragment.bytes.count + 400)
        func key(_ name: StaticString, first: Bool = false) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "\""))
            name.withUTF8Buffer { out.append(contentsOf: $0) }
            out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        }
        func string(_ value: String) { JSONWriter.writeString(value, into: &out) }
        func stamp(_ stamp: Record.Stamp) {
            out.append(UInt8(ascii: "{"))
            key("timestamp", first: true)
            out.append(contentsOf: Array(String(stamp.timestamp).utf8))
            key("userRecordName")
            string(stamp.userRecordName)
            key("deviceID")
            string(stamp.deviceID)
            out.append(UInt8(ascii: "}"))
        }
        let zone = JSONWriter.bytes(encodeZoneID(record.zoneID))
        out.append(UInt8(ascii: "{"))
        key("recordName", first: true)
        string(record.recordName)
        key("recordType")
        string(record.recordType)
        if let tag = record.recordChangeTag {
            key("recordChangeTag")
            string(tag)
        }
        key("fields")
        out.append(contentsOf: stored.fragment.bytes)
        key("pluginFields")
        out.append(contentsOf: [UInt8(ascii: "{"), UInt8(ascii: "}")])
        if let created = record.created {
            key("created")
            stamp(created)
        }
        if let modified = record.modified {
            key("modified")
            stamp(modified)
        }
        if let parent = record.parent {
            key("parent")
            out.append(UInt8(ascii: "{"))
            key("recordName", first: true)
            string(parent)
            out.append(UInt8(ascii: "}"))
        }
        if let share = record.share {
            key("share")
            out.append(UInt8(ascii: "{"))
            key("recordName", first: true)
            string(share)
            key("zoneID")
            out.append(contentsOf: zone)
            out.append(UInt8(ascii: "}"))
        }
        key("zoneID")
        out.append(contentsOf: zone)
        out.append(UInt8(ascii: "}"))
        return .fragment(JSONFragment(trusted: out))
    }
}
