/// A record: typed fields plus the system fields CloudKit keeps.
///
/// CloudKit Web Services: Types, "Record Dictionary". `recordChangeTag` changes on every
/// successful write; `created` and `modified` are set by the server.
public struct Record: Sendable, Hashable {
    public var recordName: String
    public var recordType: String
    public var recordChangeTag: String?
    /// Setting the fields drops `encodedFields`, so the two never disagree.
    public var fields: [String: FieldValue] {
        didSet { encodedFields = nil }
    }
    /// The fields in wire form as a store holds them (`{"name": {"value": …, "type": …}}`, names
    /// sorted), when the record was read from one: a response copies them instead of encoding
    /// `fields` again. Ignored by `==` and hashing.
    public var encodedFields: EncodedFields?
    public var zoneID: ZoneID
    public var created: Stamp?
    public var modified: Stamp?
    /// True on tombstones in change feeds.
    public var deleted: Bool
    /// The parent record's name (share hierarchies), in the same zone.
    public var parent: String?
    /// The share this record is the root of, by record name.
    public var share: String?
    /// On a `cloudkit.share` record: its participants, permissions and URL, as the viewer may see them.
    public var sharing: Share?

    public init(recordName: String, recordType: String, recordChangeTag: String? = nil, fields: [String: FieldValue] = [:],
                zoneID: ZoneID = .defaultZone, created: Stamp? = nil, modified: Stamp? = nil, deleted: Bool = false,
                parent: String? = nil, share: String? = nil) {
        self.recordName = recordName
        self.recordType = recordType
        self.recordChangeTag = recordChangeTag
        self.fields = fields
        self.zoneID = zoneID
        self.created = created
        self.modified = modified
        self.deleted = deleted
        self.parent = parent
        self.share = share
    }

    /// Who changed a record and when (CloudKit's `created` / `modified` dictionaries).
    /// `timestamp` in milliseconds since 1970-01-01 UTC.
    public struct Stamp: Sendable, Hashable {
        public var timestamp: Int64
        public var userRecordName: String
        public var deviceID: String

        public init(timestamp: Int64, userRecordName: String, deviceID: String = "") {
            self.timestamp = timestamp
            self.userRecordName = userRecordName
            self.deviceID = deviceID
        }
    }
}

/// A record's fields as stored JSON text; carried alongside `Record.fields`, never compared.
public struct EncodedFields: Sendable, Hashable {
    public let fragment: JSONFragment

    public init(_ fragment: JSONFragment) { self.fragment = fragment }

    public static func == (lhs: EncodedFields, rhs: EncodedFields) -> Bool { true }
    public func hash(into hasher: inout Hasher) {}
}
