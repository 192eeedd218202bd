internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Subscriptions (SQLite: `SQLiteStore+Subscriptions.swift`).
extension PostgresStoreTransaction {
    func subscriptions(owner: String, container: String, environment: Environment, scope: DatabaseType) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions WHERE container_id = $1 AND environment = $2 AND owner = $3 AND scope = $4
            ORDER BY id
            """, [.text(container), .text(environment.rawValue), .text(owner), .text(scope.rawValue)], SubscriptionRows.subscription).compactMap { $0 }
    }

    func subscriptions(container: String, environment: Environment, owner: String?, scope: DatabaseType?, limit: Int) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id = $1 AND environment = $2 AND ($3::text IS NULL OR owner = $3) AND ($4::text IS NULL OR scope = $4)
            ORDER BY id LIMIT $5
            """, [.text(container), .text(environment.rawValue), .optional(owner), .optional(scope?.rawValue), .integer(Int64(limit))],
            SubscriptionRows.subscription).compactMap { $0 }
    }

    func subscriptions(owner: String, limit: Int) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id IN (SELECT id FROM containers) AND environment IN ('development', 'production') AND owner = $1
            ORDER BY id LIMIT $2
            """, [.text(owner), .integer(Int64(limit))], SubscriptionRows.subscription).compactMap { $0 }
    }

    func subscriptions(seeing zone: StoredZone, container: String, environment: Environment) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions WHERE container_id = $1 AND environment = $2 AND owner = $3
            UNION ALL
            SELECT s.id, s.container_id, s.environment, s.scope, s.owner, s.body FROM zone_viewers v
            JOIN subscriptions s ON s.container_id = $1 AND s.environment = $2 AND s.owner = v.viewer
            WHERE v.zone_id = $4
            """, [.text(container), .text(environment.rawValue), .text(zone.zoneID.ownerRecordName ?? ""), .integer(zone.key)],
            SubscriptionRows.subscription).compactMap { $0 }
    }

    func publicSubscriptions(container: String, environment: Environment) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id = $1 AND environment = $2 AND scope = $3 AND kind = $4 ORDER BY id
            """, [.text(container), .text(environment.rawValue), .text(DatabaseType.public.rawValue), .text(Subscription.Kind.query.rawValue)],
            SubscriptionRows.subscription).compactMap { $0 }
    }

    func putSubscription(_ stored: StoredSubscription, at time: Int64) throws {
        let body = JSONWriter.bytes(SubscriptionCodec.encode(stored.subscription))
        try db.run("""
            INSERT INTO subscriptions (container_id, environment, scope, owner, subscription_id, kind, zone_owner, zone_name, body, created_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
            ON CONFLICT (container_id, environment, scope, owner, subscription_id) DO UPDATE SET kind = excluded.kind,
                zone_owner = excluded.zone_owner, zone_name = excluded.zone_name, body = excluded.body
            """, [.text(stored.container), .text(stored.environment.rawValue), .text(stored.scope.rawValue), .text(stored.owner),
                  .text(stored.subscription.subscriptionID), .text(stored.subscription.kind.rawValue),
                  .optional(stored.subscription.zoneID?.ownerRecordName), .optional(stored.subscription.zoneID?.zoneName),
                  .bytes(body), .integer(time)])
    }

    @discardableResult
    func deleteSubscription(owner: String, container: String, environment: Environment, scope: DatabaseType, id: String) throws -> Bool {
        try db.run("""
            DELETE FROM subscriptions WHERE container_id = $1 AND environment = $2 AND scope = $3 AND owner = $4 AND subscription_id = $5
            """, [.text(container), .text(environment.rawValue), .text(scope.rawValue), .text(owner), .text(id)]) > 0
    }
}
