import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func subscriptions(owner: String, container: String, environment: Environment, scope: DatabaseType) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions WHERE container_id = ? AND environment = ? AND owner = ? AND scope = ? ORDER BY id
            """, [.text(container), .text(environment.rawValue), .text(owner), .text(scope.rawValue)], SubscriptionRows.subscription).compactMap { $0 }
    }

    /// Seeks `subscriptions_by_owner` by its (container, environment) prefix.
    func subscriptions(container: String, environment: Environment, owner: String?, scope: DatabaseType?, limit: Int) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id = ? AND environment = ? AND (?3 IS NULL OR owner = ?3) AND (?4 IS NULL OR scope = ?4) ORDER BY id LIMIT ?5
            """, [.text(container), .text(environment.rawValue), owner.map(SQLiteValue.text) ?? .null, scope.map { .text($0.rawValue) } ?? .null,
                  .integer(Int64(limit))], SubscriptionRows.subscription).compactMap { $0 }
    }

    /// The IN lists let SQLite seek `subscriptions_by_owner` (container, environment, owner) per
    /// container instead of reading every subscription.
    func subscriptions(owner: String, limit: Int) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id IN (SELECT id FROM containers) AND environment IN ('development', 'production') AND owner = ?
            ORDER BY id LIMIT ?
            """, [.text(owner), .integer(Int64(limit))], SubscriptionRows.subscription).compactMap { $0 }
    }

    /// CROSS JOIN keeps SQLite driving from the zone's few viewers: left to choose, it walked
    /// every subscription of the container (measured: 1,000 subscriptions halved the write rate).
    func subscriptions(seeing zone: StoredZone, container: String, environment: Environment) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions WHERE container_id = ?1 AND environment = ?2 AND owner = ?3
            UNION ALL
            SELECT s.id, s.container_id, s.environment, s.scope, s.owner, s.body FROM zone_viewers v
            CROSS JOIN subscriptions s ON s.container_id = ?1 AND s.environment = ?2 AND s.owner = v.viewer
            WHERE v.zone_id = ?4
            """, [.text(container), .text(environment.rawValue), .text(zone.zoneID.ownerRecordName ?? ""), .integer(zone.key)],
            SubscriptionRows.subscription).compactMap { $0 }
    }

    /// Found through the UNIQUE (container_id, environment, scope, ...) index; query
    /// subscriptions only (the only kind the public database takes).
    func publicSubscriptions(container: String, environment: Environment) throws -> [StoredSubscription] {
        try db.query("""
            SELECT \(SubscriptionRows.columns) FROM subscriptions
            WHERE container_id = ? AND environment = ? AND scope = ? AND kind = ? ORDER BY id
            """, [.text(container), .text(environment.rawValue), .text(DatabaseType.public.rawValue), .text(Subscription.Kind.query.rawValue)],
            SubscriptionRows.subscription).compactMap { $0 }
    }

    func putSubscription(_ stored: StoredSubscription, at time: Int64) throws {
        let body = JSONWriter.bytes(SubscriptionCodec.encode(stored.subscription))
        try db.run("""
            INSERT INTO subscriptions (container_id, environment, scope, owner, subscription_id, kind, zone_owner, zone_name, body, created_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (container_id, environment, scope, owner, subscription_id) DO UPDATE SET kind = excluded.kind,
                zone_owner = excluded.zone_owner, zone_name = excluded.zone_name, body = excluded.body
            """, [.text(stored.container), .text(stored.environment.rawValue), .text(stored.scope.rawValue), .text(stored.owner),
                  .text(stored.subscription.subscriptionID), .text(stored.subscription.kind.rawValue),
                  stored.subscription.zoneID?.ownerRecordName.map(SQLiteValue.text) ?? .null,
                  stored.subscription.zoneID.map { .text($0.zoneName) } ?? .null, .blob(body), .integer(time)])
    }

    @discardableResult
    func deleteSubscription(owner: String, container: String, environment: Environment, scope: DatabaseType, id: String) throws -> Bool {
        try db.run("DELETE FROM subscriptions WHERE container_id = ? AND environment = ? AND scope = ? AND owner = ? AND subscription_id = ?",
                   [.text(container), .text(environment.rawValue), .text(scope.rawValue), .text(owner), .text(id)])
        return db.changes > 0
    }
}
