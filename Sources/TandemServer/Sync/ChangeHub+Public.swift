import TandemCore
import TandemStore

extension ChangeHub {
    /// The public database (decision J12): every signed-in user's query subscriptions there,
    /// each firing only for records its owner may READ under the schema's grants
    /// (`PublicGrants`, as records/query applies them), with database scope `PUBLIC`.
    static func matchPublic(_ event: ChangeEvent, reader: any StoreReading) throws -> Matches {
        var results = Matches()
        guard !event.records.isEmpty else { return results }
        let subscriptions = try reader.publicSubscriptions(container: event.container, environment: event.environment)
        let database = DatabaseScope(container: event.container, environment: event.environment, database: .public,
                                     owner: DatabaseScope.publicOwner)
        var access: [String: PublicGrants.ReadAccess] = [:]
        for stored in subscriptions {
            let subscription = stored.subscription
            guard subscription.kind == .query, let query = subscription.query, subscription.zoneID?.isDefaultZone ?? true,
                  event.records.contains(where: { $0.recordType == query.recordType }) else { continue }
            let key = stored.owner + "\u{0}" + query.recordType
            if access[key] == nil {
                access[key] = try PublicGrants.readAccess(query.recordType, reader, scope: RequestScope(database: database, user: stored.owner))
            }
            guard let readable = access[key], readable != .none else { continue }
            let base = PushNotification(recipient: stored.owner, subscriptionID: subscription.subscriptionID, kind: "query",
                                        container: event.container, environment: event.environment.rawValue, databaseScope: "PUBLIC",
                                        zoneID: event.zone.zoneID, notificationInfo: subscription.notificationInfo,
                                        originDeviceID: event.deviceID, webhookURL: subscription.webhookURL,
                                        webhookSecret: subscription.webhookSecret, timestamp: Clock.milliseconds())
            try matchQuery(stored, base: base, changes: event.records, zone: event.zone, memberships: nil,
                           ownRecordsOnly: readable == .ownRecords, reader: reader, into: &results)
        }
        return results
    }
}
