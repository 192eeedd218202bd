import TandemCore

/// Subscriptions as both stores select them (decisions P44).
package enum SubscriptionRows {
    package static let columns = "id, container_id, environment, scope, owner, body"

    /// A stored subscription, or nil when its body no longer decodes (skipped by both stores,
    /// so one damaged row does not hide the others).
    package static func subscription(_ row: some StoredRow) throws -> StoredSubscription? {
        guard let json = try? JSONParser.parse(try row.bytes(5)),
              let subscription = try? SubscriptionCodec.decode(json, context: "stored subscription", newID: { "" }) else { return nil }
        var decoded = subscription
        decoded.webhookSecret = json["webhookSecret"]?.stringValue
        return StoredSubscription(key: try row.int64(0), container: try row.string(1),
                                  environment: Environment(rawValue: try row.string(2)) ?? .development,
                                  scope: DatabaseType(rawValue: try row.string(3)) ?? .private, owner: try row.string(4), subscription: decoded)
    }
}
