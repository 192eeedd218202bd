/// The subscription dictionary of CloudKit Web Services (Types: "Subscription Dictionary"),
/// with `subscriptionType` `query`, `zone` or (Tandem, as CKDatabaseSubscription) `database`,
/// and Tandem's `webhookURL`.
public enum SubscriptionCodec {
    /// The most JSON a subscription's `notificationInfo` may hold (APNs allows 4 KB payloads).
    public static let notificationInfoBytes = 4096

    public static func encode(_ subscription: Subscription) -> JSONValue {
        var o: JSONObject = ["subscriptionID": .string(subscription.subscriptionID),
                             "subscriptionType": .string(subscription.kind.rawValue)]
        if let zoneID = subscription.zoneID { o["zoneID"] = RecordCodec.encodeZoneID(zoneID) }
        if subscription.kind == .query {
            if let query = subscription.queryJSON { o["query"] = query }
            o["firesOn"] = .array(Subscription.Event.allCases.filter(subscription.firesOn.contains).map { .string($0.rawValue) })
            o["firesOnce"] = .bool(subscription.firesOnce)
            o["zoneWide"] = .bool(subscription.zoneWide)
        }
        if let info = subscription.notificationInfo { o["notificationInfo"] = .object(info) }
        if let url = subscription.webhookURL { o["webhookURL"] = .string(url) }
        if let secret = subscription.webhookSecret { o["webhookSecret"] = .string(secret) }
        return .object(o)
    }

    /// Decodes a subscription from a `subscriptions/modify` operation. `subscriptionID` may be
    /// absent on create (the server picks one). Throws `BAD_REQUEST` naming `context`.
    public static func decode(_ json: JSONValue, context: String, newID: () -> String) throws(CloudKitError) -> Subscription {
        guard case .object(let o) = json else { throw .badRequest("\(context) must be a dictionary") }
        var id = newID()
        if let value = o["subscriptionID"], !value.isNull {
            guard let s = value.stringValue, Names.isValidRecordOrZoneName(s) else {
                throw .badRequest("\(context): subscriptionID must be 1–255 printable ASCII characters")
            }
            id = s
        }
        guard let typeName = o["subscriptionType"]?.stringValue else {
            throw .badRequest("\(context) needs 'subscriptionType' (query, zone or database)")
        }
        guard let kind = Subscription.Kind(rawValue: typeName) else {
            throw .badRequest("\(context): subscriptionType must be query, zone or database, not '\(typeName)'")
        }
        var subscription = Subscription(subscriptionID: id, kind: kind)
        if let zone = o["zoneID"], !zone.isNull { subscription.zoneID = try RecordCodec.decodeZoneID(zone) }
        switch kind {
        case .zone:
            guard subscription.zoneID != nil else { throw .badRequest("\(context): a zone subscription needs a 'zoneID'") }
        case .database:
            guard subscription.zoneID == nil else { throw .badRequest("\(context): a database subscription covers every zone; drop 'zoneID'") }
        case .query:
            guard let query = o["query"], !query.isNull else { throw .badRequest("\(context): a query subscription needs a 'query'") }
            _ = try QueryCodec.decodeQuery(query)
            subscription.queryJSON = query
            if let events = o["firesOn"], !events.isNull {
                guard case .array(let items) = events, !items.isEmpty else {
                    throw .badRequest("\(context): firesOn must be a non-empty array of create, update, delete")
                }
                var set = Set<Subscription.Event>()
                for item in items {
                    guard let name = item.stringValue, let event = Subscription.Event(rawValue: name) else {
                        throw .badRequest("\(context): firesOn entries are create, update or delete")
                    }
                    set.insert(event)
                }
                subscription.firesOn = set
            }
            if let once = o["firesOnce"], !once.isNull {
                guard let b = once.boolValue else { throw .badRequest("\(context): firesOnce must be true or false") }
                subscription.firesOnce = b
            }
            // CloudKit: a query subscription without a zone is zone-wide.
            if let wide = o["zoneWide"], !wide.isNull {
                guard let b = wide.boolValue else { throw .badRequest("\(context): zoneWide must be true or false") }
                guard !(b && subscription.zoneID != nil) else {
                    throw .badRequest("\(context): give either zoneWide: true or a zoneID, not both")
                }
                subscription.zoneWide = b
            } else {
                subscription.zoneWide = subscription.zoneID == nil
            }
            guard subscription.zoneWide || subscription.zoneID != nil else {
                throw .badRequest("\(context): a query subscription that is not zoneWide needs a zoneID")
            }
        }
        if let info = o["notificationInfo"], !info.isNull {
            guard case .object(let object) = info else { throw .badRequest("\(context): notificationInfo must be a dictionary") }
            guard JSONWriter.bytes(info).count <= notificationInfoBytes else {
                throw .badRequest("\(context): notificationInfo may hold at most \(notificationInfoBytes) bytes of JSON (it travels with every notification)")
            }
            subscription.notificationInfo = object
        }
        if let url = o["webhookURL"], !url.isNull {
            guard let s = url.stringValue, WebhookURLs.isAllowed(s) else {
                throw .badRequest("\(context): webhookURL must be an https:// URL with a host and no user info (http:// only to addresses the operator opened)")
            }
            subscription.webhookURL = s
        }
        return subscription
    }
}

/// The shape a webhook URL must have: `https://` (or `http://`) with a host, an optional port
/// and no user info (`user@host`), printable ASCII, at most 2048 bytes. Which addresses it may
/// reach is the server's outbound-address rule, applied when the subscription is saved and at
/// every delivery (the host's addresses can change).
public enum WebhookURLs {
    public static func isAllowed(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else { return false }
        let isHTTPS = url.lowercased().hasPrefix("https://")
        guard isHTTPS || url.lowercased().hasPrefix("http://") else { return false }
        let rest = url.dropFirst(isHTTPS ? 8 : 7)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), !authority.contains("\\") else { return false }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return false }
            let after = authority[authority.index(after: close)...]
            return close > authority.index(after: authority.startIndex) && (after.isEmpty || isPort(after))
        }
        let parts = authority.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty else { return false }
        return parts.count == 1 || isPort(":" + parts[1])
    }

    private static func isPort<S: StringProtocol>(_ text: S) -> Bool {
        guard text.first == ":" else { return false }
        let digits = text.dropFirst()
        return !digits.isEmpty && digits.count <= 5 && digits.allSatisfy(\.isNumber) && (Int(digits) ?? 0) <= 65535
    }
}
