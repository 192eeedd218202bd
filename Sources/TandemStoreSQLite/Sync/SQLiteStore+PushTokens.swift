import TandemSQLite
import TandemStore

/// Long-poll push tokens and their mailboxes (decisions N58; PostgreSQL: `PostgresStore+PushTokens.swift`).
extension SQLiteStoreTransaction {
    func pushToken(_ token: String) throws -> StoredPushToken? {
        let rows = try db.query("SELECT user_record_name, container_id, environment FROM push_tokens WHERE token = ? ORDER BY container_id, environment",
                                [.text(token)]) { ($0.text(0), PushTokenScope(container: $0.text(1), environment: $0.text(2))) }
        guard let user = rows.first?.0 else { return nil }
        let waiting = try db.queryOne("SELECT COUNT(*) FROM push_mailbox WHERE token = ?", [.text(token)]) { $0.int64(0) } ?? 0
        return StoredPushToken(user: user, scopes: rows.map(\.1), waiting: Int(waiting))
    }

    func pushTokens(user: String, container: String, environment: String) throws -> [String] {
        try db.query("SELECT token FROM push_tokens WHERE user_record_name = ? AND container_id = ? AND environment = ? ORDER BY token",
                     [.text(user), .text(container), .text(environment)]) { $0.text(0) }
    }

    func registerPushToken(_ token: String, user: String, container: String, environment: String, at time: Int64,
                           perUser: Int, maximum: Int) throws -> Bool {
        let owner = try db.queryOne("SELECT user_record_name FROM push_tokens WHERE token = ? LIMIT 1", [.text(token)]) { $0.text(0) }
        if let owner, owner != user { return false }
        if owner == nil {
            let count = try db.queryOne("SELECT COUNT(DISTINCT token) FROM push_tokens", []) { $0.int64(0) } ?? 0
            guard count < maximum else { return false }
        }
        try db.run("""
            INSERT INTO push_tokens (token, container_id, environment, user_record_name, created_at) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT DO NOTHING
            """, [.text(token), .text(container), .text(environment), .text(user), .integer(time)])
        guard owner == nil else { return true }
        let others = try db.query("""
            SELECT token FROM push_tokens WHERE user_record_name = ? AND token <> ? GROUP BY token ORDER BY MIN(created_at) DESC, token
            """, [.text(user), .text(token)]) { $0.text(0) }
        for old in others.dropFirst(max(perUser - 1, 0)) {
            try db.run("DELETE FROM push_tokens WHERE token = ?", [.text(old)])
            try db.run("DELETE FROM push_mailbox WHERE token = ?", [.text(old)])
        }
        return true
    }

    func enqueuePushNotification(_ notification: String, tokens: [String], limit: Int) throws {
        for token in tokens {
            try db.run("INSERT INTO push_mailbox (token, notification) VALUES (?, ?)", [.text(token), .text(notification)])
            try db.run("""
                DELETE FROM push_mailbox WHERE token = ?
                AND seq <= (SELECT seq FROM push_mailbox WHERE token = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)
                """, [.text(token), .text(token), .integer(Int64(limit))])
        }
    }

    func takePushNotifications(token: String, limit: Int) throws -> [String] {
        try db.query("""
            DELETE FROM push_mailbox WHERE seq IN (SELECT seq FROM push_mailbox WHERE token = ? ORDER BY seq LIMIT ?)
            RETURNING seq, notification
            """, [.text(token), .integer(Int64(min(limit, Int(Int64.max))))]) { ($0.int64(0), $0.text(1)) }
            .sorted { $0.0 < $1.0 }.map(\.1)
    }
}
