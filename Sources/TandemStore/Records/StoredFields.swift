package import TandemCore

/// A record's fields as both stores keep them (`records.fields`): one JSON object, its members
/// sorted by name, each encoded as CloudKit Web Services spells a field (`FieldCodec`).
package enum StoredFields {
    package static func encode(_ fields: [String: FieldValue]) -> [UInt8] {
        var object = JSONObject()
        for name in fields.keys.sorted() { object[name] = FieldCodec.encodeField(fields[name]!) }
        return JSONWriter.bytes(.object(object))
    }

    /// What `record`'s fields are stored as: its `encodedFields` when it carries them (a
    /// record the records service encoded once for its size, store and response), else encoded.
    package static func bytes(of record: Record) -> [UInt8] {
        record.encodedFields?.fragment.bytes ?? encode(record.fields)
    }

    /// Fields from their stored JSON, and whether every one decoded. Stored fields were
    /// validated when written, so a field that no longer decodes means damaged storage; it is
    /// dropped rather than failing reads.
    package static func decode(_ stored: [UInt8]) -> (fields: [String: FieldValue], complete: Bool) {
        var fields: [String: FieldValue] = [:]
        guard case .object(let object)? = try? JSONParser.parse(stored) else { return (fields, false) }
        for entry in object.entries {
            if let value = try? FieldCodec.decodeField(entry.value, name: entry.key) { fields[entry.key] = value }
        }
        return (fields, fields.count == object.count)
    }

    /// Whether stored fields hold an asset (`"type":"ASSET…"`), whose download URL a response must add.
    package static func containsAsset(_ stored: [UInt8]) -> Bool {
        let needle = Array(#""ASSET"#.utf8)
        guard stored.count >= needle.count else { return false }
        var index = 0
        while index <= stored.count - needle.count {
            if stored[index] == needle[0] && stored[index + 1] == needle[1] && Array(stored[index..<index + needle.count]) == needle { return true }
            index += 1
        }
        return false
    }

    /// `record` with `stored` as its fields. Without `decodeFields`, a record whose stored
    /// fields hold no asset keeps only their stored text (`encodedFields`, which responses copy
    /// as is) and an empty `fields`: for read paths that only pass records on.
    package static func attach(_ stored: [UInt8], to record: inout Record, decodeFields: Bool) {
        if !decodeFields && !containsAsset(stored) {
            record.encodedFields = EncodedFields(JSONFragment(trusted: stored))
            return
        }
        let (fields, complete) = decode(stored)
        record.fields = fields
        // Only when every stored field decoded: then the text says exactly what `fields` says.
        if complete { record.encodedFields = EncodedFields(JSONFragment(trusted: stored)) }
    }
}
