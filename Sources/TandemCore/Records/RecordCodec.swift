/// Encodes and decodes the record and zone dictionaries of CloudKit Web Services (Types).
public enum RecordCodec {
    /// Options for encoding records in a response.
    public struct EncodingOptions: Sendable {
        /// Only these user fields are returned; nil returns all, an empty set only system fields
        /// (CloudKit Web Services: `desiredKeys`).
        public var desiredKeys: Set<String>?
        /// Numbers as strings (CloudKit Web Services: `numbersAsStrings`).
        public var numbersAsStrings: Bool
        /// Makes an asset's `downloadURL` from the record, field name and asset.
        public var assetDownloadURL: (@Sendable (Record, String, Asset) -> String?)?

        public init(desiredKeys: Set<String>? = nil, numbersAsStrings: Bool = false,
                    assetDownloadURL: (@Sendable (Record, String, Asset) -> String?)? = nil) {
            self.desiredKeys = desiredKeys
            self.numbersAsStrings = numbersAsStrings
            self.assetDownloadURL = assetDownloadURL
        }
    }

    public static func encodeRecord(_ record: Record, options: EncodingOptions = EncodingOptions()) -> JSONValue {
        var o = JSONObject()
        o["recordName"] = .string(record.recordName)
        o["recordType"] = .string(record.recordType)
        if let tag = record.recordChangeTag { o["recordChangeTag"] = .string(tag) }
        if record.deleted {
            o["deleted"] = .bool(true)
        } else if let stored = record.encodedFields, options.desiredKeys == nil, !options.numbersAsStrings,
                  options.assetDownloadURL == nil || !record.fields.values.contains(where: \.holdsAsset) {
            // The stored text is exactly what the loop below would write.
            o["fields"] = .fragment(stored.fragment)
            o["pluginFields"] = .object(JSONObject())
        } else {
            var fields = JSONObject()
            for name in record.fields.keys.sorted() {
                if let desired = options.desiredKeys, !desired.contains(name) { continue }
                var value = record.fields[name]!
                if let makeURL = options.assetDownloadURL {
                    value = withDownloadURLs(value, record: record, field: name, makeURL: makeURL)
                }
                fields[name] = FieldCodec.encodeField(value, numbersAsStrings: options.numbersAsStrings)
            }
            o["fields"] = .object(fields)
            o["pluginFields"] = .object(JSONObject())
        }
        if let created = record.created { o["created"] = encodeStamp(created) }
        if let modified = record.modified { o["modified"] = encodeStamp(modified) }
        if let parent = record.parent { o["parent"] = .object(["recordName": .string(parent)]) }
        if let share = record.share { o["share"] = .object(["recordName": .string(share), "zoneID": encodeZoneID(record.zoneID)]) }
        o["zoneID"] = encodeZoneID(record.zoneID)
        if let sharing = record.sharing { ShareCodec.encode(sharing, into: &o) }
        return .object(o)
    }

    private static func withDownloadURLs(_ value: FieldValue, record: Record, field: String,
                                         makeURL: (Record, String, Asset) -> String?) -> FieldValue {
        switch value {
        case .asset(var asset):
            asset.downloadURL = makeURL(record, field, asset)
            asset.receipt = nil
            return .asset(asset)
        case .list(let items, .asset):
            return .list(items.map { withDownloadURLs($0, record: record, field: field, makeURL: makeURL) }, of: .asset)
        default:
            return value
        }
    }

    public static func encodeStamp(_ stamp: Record.Stamp) -> JSONValue {
        .object(["timestamp": .int(stamp.timestamp), "userRecordName": .string(stamp.userRecordName),
                 "deviceID": .string(stamp.deviceID)])
    }

    public static func decodeStamp(_ json: JSONValue) -> Record.Stamp? {
        guard let t = json["timestamp"]?.int64Value, let user = json["userRecordName"]?.stringValue else { return nil }
        return Record.Stamp(timestamp: t, userRecordName: user, deviceID: json["deviceID"]?.stringValue ?? "")
    }

    public static func encodeZoneID(_ zoneID: ZoneID) -> JSONValue {
        var o: JSONObject = ["zoneName": .string(zoneID.zoneName)]
        if let owner = zoneID.ownerRecordName { o["ownerRecordName"] = .string(owner) }
        o["zoneType"] = .string(zoneID.isDefaultZone ? "DEFAULT_ZONE" : "REGULAR_CUSTOM_ZONE")
        return .object(o)
    }

    /// Decodes a zone ID dictionary. Throws `BAD_REQUEST` for a missing or invalid `zoneName`.
    public static func decodeZoneID(_ json: JSONValue) throws(CloudKitError) -> ZoneID {
        guard case .object(let o) = json else { throw .badRequest("zoneID must be a dictionary with 'zoneName'") }
        guard let name = o["zoneName"]?.stringValue else { throw .badRequest("zoneID needs a 'zoneName' string") }
        guard Names.isValidRecordOrZoneName(name) else {
            throw .badRequest("zoneName must be 1–255 printable ASCII characters")
        }
        var owner: String?
        if let ownerJSON = o["ownerRecordName"], !ownerJSON.isNull {
            guard let s = ownerJSON.stringValue else { throw .badRequest("zoneID 'ownerRecordName' must be a string") }
            owner = s
        }
        return ZoneID(zoneName: name, ownerRecordName: owner)
    }

    /// Decodes a full record dictionary as a client holds it (the inverse of `encodeRecord`).
    public static func decodeRecord(_ json: JSONValue) throws(CloudKitError) -> Record {
        guard case .object(let o) = json else { throw .badRequest("record must be a dictionary") }
        guard let name = o["recordName"]?.stringValue else { throw .badRequest("record needs 'recordName'") }
        let type = o["recordType"]?.stringValue ?? ""
        var fields: [String: FieldValue] = [:]
        if case .object(let f) = o["fields"] ?? .null {
            for entry in f.entries { fields[entry.key] = try FieldCodec.decodeField(entry.value, name: entry.key) }
        }
        var zone = ZoneID.defaultZone
        if let z = o["zoneID"] { zone = try decodeZoneID(z) }
        return Record(recordName: name, recordType: type, recordChangeTag: o["recordChangeTag"]?.stringValue, fields: fields,
                      zoneID: zone, created: o["created"].flatMap(decodeStamp), modified: o["modified"].flatMap(decodeStamp),
                      deleted: o["deleted"]?.boolValue ?? false, parent: o["parent"]?["recordName"]?.stringValue,
                      share: o["share"]?["recordName"]?.stringValue)
    }
}
