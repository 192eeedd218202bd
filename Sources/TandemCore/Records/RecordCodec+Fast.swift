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
        // Each key is written with its quotes and colon, and the comma before it, in one copy.
        func key(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        func string(_ value: String) { JSONWriter.writeString(value, into: &out) }
        func stamp(_ stamp: Record.Stamp) {
            key(#"{"timestamp":"#)
            writeInteger(stamp.timestamp, into: &out)
            key(#","userRecordName":"#)
            string(stamp.userRecordName)
            key(#","deviceID":"#)
            string(stamp.deviceID)
            out.append(UInt8(ascii: "}"))
        }
        key(#"{"recordName":"#)
        string(record.recordName)
        key(#","recordType":"#)
        string(record.recordType)
        if let tag = record.recordChangeTag {
            key(#","recordChangeTag":"#)
            string(tag)
        }
        key(#","fields":"#)
        out.append(contentsOf: stored.fragment.bytes)
        key(#","pluginFields":{}"#)
        if let created = record.created {
            key(#","created":"#)
            stamp(created)
        }
        if let modified = record.modified {
            key(#","modified":"#)
            stamp(modified)
        }
        if let parent = record.parent {
            key(#","parent":{"recordName":"#)
            string(parent)
            out.append(UInt8(ascii: "}"))
        }
        if let share = record.share {
            key(#","share":{"recordName":"#)
            string(share)
            key(#","zoneID":"#)
            writeZoneID(record.zoneID, into: &out)
            out.append(UInt8(ascii: "}"))
        }
        key(#","zoneID":"#)
        writeZoneID(record.zoneID, into: &out)
        out.append(UInt8(ascii: "}"))
        return .fragment(JSONFragment(trusted: out))
    }

    /// `encodeZoneID(zoneID)` as `JSONWriter` writes it, without building the dictionary.
    static func writeZoneID(_ zoneID: ZoneID, into out: inout [UInt8]) {
        func key(_ text: StaticString) { text.withUTF8Buffer { out.append(contentsOf: $0) } }
        key(#"{"zoneName":"#)
        JSONWriter.writeString(zoneID.zoneName, into: &out)
        if let owner = zoneID.ownerRecordName {
            key(#","ownerRecordName":"#)
            JSONWriter.writeString(owner, into: &out)
        }
        key(zoneID.isDefaultZone ? #","zoneType":"DEFAULT_ZONE"}"# : #","zoneType":"REGULAR_CUSTOM_ZONE"}"#)
    }

    /// A whole number in decimal, as `JSONWriter` writes an integer.
    static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        guard value != 0 else { return out.append(UInt8(ascii: "0")) }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var magnitude = value.magnitude
        var count = 0
        withUnsafeMutableBytes(of: &digits) { buffer in
            while magnitude > 0 {
                buffer[19 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            }
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(20 - count)...]))
        }
    }
}
