/// A standing question about changes (CloudKit's `CKSubscription`): query, record-zone and
/// database subscriptions (CloudKit Web Services, Types: "Subscription Dictionary";
/// CKDatabaseSubscription for the database kind CKSyncEngine uses).
public struct Subscription: Sendable, Hashable {
    public enum Kind: String, Sendable, CaseIterable {
        /// Records of one type matching filters (`CKQuerySubscription`).
        case query
        /// Any change in one zone (`CKRecordZoneSubscription`).
        case zone
        /// Any change in the database (`CKDatabaseSubscription`).
        case database
    }

    /// What a query subscription fires on (`firesOn`).
    public enum Event: String, Sendable, CaseIterable {
        case create, update, delete
    }

    public var subscriptionID: String
    public var kind: Kind
    /// The zone of a zone subscription, or a query subscription limited to one zone.
    public var zoneID: ZoneID?
    /// The query of a query subscription as the client sent it (kept to echo it back).
    public var queryJSON: JSONValue?
    public var firesOn: Set<Event>
    /// Deleted after it fires once.
    public var firesOnce: Bool
    /// A query subscription over every zone of the database (`zoneWide`).
    public var zoneWide: Bool
    /// CloudKit's `notificationInfo` (alert, sound, badge, content-available), kept and echoed.
    public var notificationInfo: JSONObject?
    /// Tandem: deliver to this HTTPS (or loopback HTTP) URL as a signed webhook.
    public var webhookURL: String?
    /// The HMAC-SHA256 key of the webhook's signatures; returned once, when created.
    public var webhookSecret: String?

    public init(subscriptionID: String, kind: Kind, zoneID: ZoneID? = nil, queryJSON: JSONValue? = nil, firesOn: Set<Event> = Set(Event.allCases),
                firesOnce: Bool = false, zoneWide: Bool = false, notificationInfo: JSONObject? = nil, webhookURL: String? = nil,
                webhookSecret: String? = nil) {
        self.subscriptionID = subscriptionID
        self.kind = kind
        self.zoneID = zoneID
        self.queryJSON = queryJSON
        self.firesOn = firesOn
        self.firesOnce = firesOnce
        self.zoneWide = zoneWide
        self.notificationInfo = notificationInfo
        self.webhookURL = webhookURL
        self.webhookSecret = webhookSecret
    }

    /// The decoded query (validated when the subscription was saved).
    public var query: Query? { queryJSON.flatMap { try? QueryCodec.decodeQuery($0) } }
}
