internal import TandemPostgres
internal import TandemStore

/// Long-poll push tokens and their mailboxes (decisions N58; SQLite: `SQLiteStore+PushTokens.swift`).
extension PostgresStoreTransaction {
    func pushToken(_ token: String) throws -> StoredPushToken? {
        let rows = try db.query("SELECT user_record_name, container_id, environment FROM push_tokens WHERE token = $1 ORDER BY container_id, environment",
                                [.text(token)]) { (try $0.string(0), PushTokenScope(container: try $0.string(1), environment: try $0.string(2))) }
        guard let user = rows.first?.0 else { return nil }
        let waiting = try db.queryOne("SELECT COUNT(*) FROM push_mailbox WHERE token = $1", [.text(token)]) { try $0.int64(0) } ?? 0
        return StoredPushToken(user: user, scopes: rows.map(\.1), waiting: Int(waiting))
    }

    func pushTokens(user: String, container: String, environment: String) throws -> [String] {
        try db.query("SELECT token FROM push_tokens WHERE user_record_name = $1 AND container_id = $2 AND environment = $3 ORDER BY token",
                     [.text(user), .text(container), .text(environment)]) { try $0.string(0) }
    }

    func registerPushToken(_ token: String, user: String, container: String, environment: String, at time: Int64,
                           perUser: Int, maximum: Int) throws -> Bool {
        let owner = try db.queryOne("SELECT user_record_name FROM push_tokens WHERE token = $1 LIMIT 1", [.text(token)]) { try $0.string(0) }
        if let owner, owner != user { return false }
        if owner == nil {
            let count = try db.queryOne("SELECT COUNT(DISTINCT token) FROM push_tokens", []) { try $0.int64(0) } ?? 0
            guard count < maximum else { return false }
        }
        _ = try db.run("""
            INSERT INTO push_tokens (token, container_id, environment, user_record_name, created_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT DO NOTHING
            """, [.text(token), .text(container), .text(environment), .text(user), .integer(time)])
        guard owner == nil else { return true }
        let others = try db.query("""
            SELECT token FROM push_tokens WHERE user_record_name = $1 AND token <> $2 GROUP BY token ORDER BY MIN(created_at) DESC, token
            """, [.text(user), .text(token)]) { try $0.string(0) }
        for old in others.dropFirst(max(perUser - 1, 0)) {
            _ = try db.run("DELETE FROM push_tokens WHERE token = $1", [.text(old)])
            _ = try db.run("DELETE FROM push_mailbox WHERE token = $1", [.text(old)])
        }
        return true
    }

    func enqueuePushNotification(_ notification: String, tokens: [String], limit: Int) throws {
        for token in tokens {
            _ = try db.run("INSERT INTO push_mailbox (token, notification) VALUES ($1, $2)", [.text(token), .text(notification)])
            _ = try db.run("""
                DELETE FROM push_mailbox WHERE token = $1
                AND seq <= (SELECT seq FROM push_mailbox WHERE token = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)
                """, [.text(token), .integer(Int64(limit))])
        }
    }

    func takePushNotifications(token: String, limit: Int) throws -> [String] {
        try db.query("""
            DELETE FROM push_mailbox WHERE seq IN (SELECT seq FROM push_mailbox WHERE token = $1 ORDER BY seq LIMIT $2)
            RETURNING seq, notification
            """, [.text(token), .integer(Int64(min(limit, Int(Int64.max))))]) { (try $0.int64(0), try $0.string(1)) }
            .sorted { $0.0 < $1.0 }.map(\.1)
    }
}
