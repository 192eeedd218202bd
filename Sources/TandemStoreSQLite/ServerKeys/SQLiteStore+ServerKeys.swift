import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    static let serverKeyColumns = "key_id, container_id, public_key, user_record_name, created_at, revoked_at"

    static func serverKey(_ row: SQLiteStatement) -> StoredServerKey {
        StoredServerKey(keyID: row.text(0), container: row.text(1), publicKey: row.blob(2), userRecordName: row.text(3),
                        createdAt: row.int64(4), revokedAt: row.isNull(5) ? nil : row.int64(5))
    }

    func serverKey(id: String) throws -> StoredServerKey? {
        try db.queryOne("SELECT \(Self.serverKeyColumns) FROM server_keys WHERE key_id = ?", [.text(id)], Self.serverKey)
    }

    func serverKeys(container: String) throws -> [StoredServerKey] {
        try db.query("SELECT \(Self.serverKeyColumns) FROM server_keys WHERE container_id = ? ORDER BY created_at, key_id",
                     [.text(container)], Self.serverKey)
    }

    func addServerKey(_ key: StoredServerKey) throws {
        try db.run("INSERT INTO server_keys (\(Self.serverKeyColumns)) VALUES (?, ?, ?, ?, ?, ?)", [
            .text(key.keyID), .text(key.container), .blob(key.publicKey), .text(key.userRecordName), .integer(key.createdAt),
            key.revokedAt.map { .integer($0) } ?? .null,
        ])
    }

    func revokeServerKey(id: String, at time: Int64) throws -> Bool {
        try db.run("UPDATE server_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL", [.integer(time), .text(id)])
        return db.changes > 0
    }

    func revokeServerKeys(user: String, at time: Int64) throws -> Int {
        try db.run("UPDATE server_keys SET revoked_at = ? WHERE user_record_name = ? AND revoked_at IS NULL", [.integer(time), .text(user)])
        return db.changes
    }
}
