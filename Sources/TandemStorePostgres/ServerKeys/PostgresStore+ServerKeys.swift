internal import TandemPostgres
internal import TandemStore

/// Server-to-server keys (SQLite: `SQLiteStore+ServerKeys.swift`; decisions J7, A43).
extension PostgresStoreTransaction {
    private static let serverKeyColumns = "key_id, container_id, public_key, user_record_name, created_at, revoked_at"

    private static func serverKey(_ row: PostgresRow) throws -> StoredServerKey {
        StoredServerKey(keyID: try row.string(0), container: try row.string(1), publicKey: try row.bytes(2), userRecordName: try row.string(3),
                        createdAt: try row.int64(4), revokedAt: try row.optionalInt64(5))
    }

    func serverKey(id: String) throws -> StoredServerKey? {
        try db.queryOne("SELECT \(Self.serverKeyColumns) FROM server_keys WHERE key_id = $1", [.text(id)], Self.serverKey)
    }

    func serverKeys(container: String) throws -> [StoredServerKey] {
        try db.query("SELECT \(Self.serverKeyColumns) FROM server_keys WHERE container_id = $1 ORDER BY created_at, key_id",
                     [.text(container)], Self.serverKey)
    }

    func addServerKey(_ key: StoredServerKey) throws {
        try db.run("INSERT INTO server_keys (\(Self.serverKeyColumns)) VALUES ($1, $2, $3, $4, $5, $6)", [
            .text(key.keyID), .text(key.container), .bytes(key.publicKey), .text(key.userRecordName), .integer(key.createdAt),
            .optional(key.revokedAt),
        ])
    }

    func revokeServerKey(id: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE server_keys SET revoked_at = $1 WHERE key_id = $2 AND revoked_at IS NULL", [.integer(time), .text(id)]) > 0
    }

    func revokeServerKeys(user: String, at time: Int64) throws -> Int {
        try db.run("UPDATE server_keys SET revoked_at = $1 WHERE user_record_name = $2 AND revoked_at IS NULL", [.integer(time), .text(user)])
    }
}
