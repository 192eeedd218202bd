internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Highlight consent, hidden URLs and interactions (SQLite: `SQLiteStore+Highlights.swift`).
extension PostgresStoreTransaction {
    func consent(viewer: String) throws -> [StoredConsent] {
        try db.query("SELECT scope, target, allowed FROM highlight_consent WHERE viewer = $1", [.text(viewer)]) {
            StoredConsent(scope: StoredConsent.Scope(rawValue: try $0.string(0)) ?? .global, target: try $0.string(1),
                          allowed: try $0.int64(2) != 0)
        }
    }

    func hiddenURLs(viewer: String) throws -> Set<String> {
        Set(try db.query("SELECT url FROM hidden_highlights WHERE viewer = $1", [.text(viewer)]) { try $0.string(0) })
    }

    func interactionScores(viewer: String, since time: Int64) throws -> [String: Int64] {
        // SUM of a bigint is numeric in PostgreSQL: cast back (a score beyond Int64 would fail loudly).
        let rows = try db.query("""
            SELECT url, SUM(weight)::bigint FROM highlight_interactions WHERE viewer = $1 AND at >= $2 GROUP BY url
            """, [.text(viewer), .integer(time)]) { (try $0.string(0), try $0.int64(1)) }
        return Dictionary(rows, uniquingKeysWith: +)
    }

    func setConsent(viewer: String, _ consent: StoredConsent) throws {
        try db.run("""
            INSERT INTO highlight_consent (viewer, scope, target, allowed) VALUES ($1, $2, $3, $4)
            ON CONFLICT (viewer, scope, target) DO UPDATE SET allowed = EXCLUDED.allowed
            """, [.text(viewer), .text(consent.scope.rawValue), .text(consent.target), .integer(consent.allowed ? 1 : 0)])
    }

    func hide(viewer: String, url: String, at time: Int64) throws {
        try db.run("INSERT INTO hidden_highlights (viewer, url, hidden_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                   [.text(viewer), .text(url), .integer(time)])
    }

    func addInteraction(viewer: String, url: String, weight: Int64, at time: Int64) throws {
        try db.run("INSERT INTO highlight_interactions (viewer, url, weight, at) VALUES ($1, $2, $3, $4)",
                   [.text(viewer), .text(url), .integer(weight), .integer(time)])
    }

    func purgeInteractions(before time: Int64) throws {
        try db.run("DELETE FROM highlight_interactions WHERE at < $1", [.integer(time)])
    }
}
