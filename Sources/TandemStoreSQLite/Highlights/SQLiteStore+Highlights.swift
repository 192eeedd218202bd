import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func consent(viewer: String) throws -> [StoredConsent] {
        try db.query("SELECT scope, target, allowed FROM highlight_consent WHERE viewer = ?", [.text(viewer)]) {
            StoredConsent(scope: StoredConsent.Scope(rawValue: $0.text(0)) ?? .global, target: $0.text(1), allowed: $0.int64(2) != 0)
        }
    }

    func hiddenURLs(viewer: String) throws -> Set<String> {
        Set(try db.query("SELECT url FROM hidden_highlights WHERE viewer = ?", [.text(viewer)]) { $0.text(0) })
    }

    func interactionScores(viewer: String, since time: Int64) throws -> [String: Int64] {
        var scores: [String: Int64] = [:]
        for (url, weight) in try db.query("SELECT url, SUM(weight) FROM highlight_interactions WHERE viewer = ? AND at >= ? GROUP BY url",
                                          [.text(viewer), .integer(time)], { ($0.text(0), $0.int64(1)) }) {
            scores[url] = weight
        }
        return scores
    }

    func setConsent(viewer: String, _ consent: StoredConsent) throws {
        try db.run("""
            INSERT INTO highlight_consent (viewer, scope, target, allowed) VALUES (?, ?, ?, ?)
            ON CONFLICT (viewer, scope, target) DO UPDATE SET allowed = excluded.allowed
            """, [.text(viewer), .text(consent.scope.rawValue), .text(consent.target), .integer(consent.allowed ? 1 : 0)])
    }

    func hide(viewer: String, url: String, at time: Int64) throws {
        try db.run("INSERT OR IGNORE INTO hidden_highlights (viewer, url, hidden_at) VALUES (?, ?, ?)", [.text(viewer), .text(url), .integer(time)])
    }

    func addInteraction(viewer: String, url: String, weight: Int64, at time: Int64) throws {
        try db.run("INSERT INTO highlight_interactions (viewer, url, weight, at) VALUES (?, ?, ?, ?)",
                   [.text(viewer), .text(url), .integer(weight), .integer(time)])
    }

    func purgeInteractions(before time: Int64) throws {
        try db.run("DELETE FROM highlight_interactions WHERE at < ?", [.integer(time)])
    }
}
