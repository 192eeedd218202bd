/// The subscription dictionary of CloudKit Web Services (Types: "Subscription Dictionary"),
/// with `subscriptionType` `query`, `zone` or (Tandem, as CKDatabaseSubscription) `database`,
/// and Tandem's `webhookURL`.
public enum SubscriptionCodec {
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
            subscription.zoneWide = o["zoneWide"]?.boolValue ?? (subscription.zoneID == nil)
            if subscription.zoneWide { subscription.zoneID = nil }
        }
        if let info = o["notificationInfo"], !info.isNull {
            guard case .object(let object) = info else { throw .badRequest("\(context): notificationInfo must be a dictionary") }
            subscription.notificationInfo = object
        }
        if let url = o["webhookURL"], !url.isNull {
            guard let s = url.stringValue, WebhookURLs.isAllowed(s) else {
                throw .badRequest("\(context): webhookURL must be an https:// URL, or http:// to a loopback address (127.0.0.1, [::1], localhost)")
            }
            subscription.webhookURL = s
        }
        return subscription
    }
}

/// Which URLs webhooks may be delivered to: HTTPS anywhere, plain HTTP only on loopback.
public enum WebhookURLs {
    public static func isAllowed(_ url: String) -> Bool {
        guard url.utf8.count <= 2048, !url.contains(" ") else { return false }
        if url.hasPrefix("https://") { return url.count > "https://".count }
        for prefix in ["http://127.0.0.1", "http://localhost", "http://[::1]"] where url.hasPrefix(prefix) {
            let rest = url.dropFirst(prefix.count)
            return rest.isEmpty || rest.first == ":" || rest.first == "/"
        }
        return false
    }
}
