import TandemCore
import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func deviceKeys(user: String) throws -> [(publicKey: [UInt8], createdAt: Int64)] {
        try db.query("SELECT public_key, created_at FROM device_keys WHERE user_record_name = ? ORDER BY created_at, public_key",
                     [.text(user)]) { (publicKey: $0.blob(0), createdAt: $0.int64(1)) }
    }

    func deviceKeyOwner(_ publicKey: [UInt8]) throws -> String? {
        try db.queryOne("SELECT user_record_name FROM device_keys WHERE public_key = ?", [.blob(publicKey)]) { $0.text(0) }
    }

    func identities(container: String, environment: String, collaboration: String) throws -> [StoredIdentity] {
        try db.query("""
            SELECT root_hash, user_record_name, issued_by, leaf_keys, state, bound_user, created_at, bound_at
            FROM collaboration_identities WHERE container_id = ? AND environment = ? AND collaboration = ?
            ORDER BY created_at, root_hash
            """, [.text(container), .text(environment), .text(collaboration)]) { row in
            StoredIdentity(container: container, environment: environment, collaboration: collaboration, rootHash: row.blob(0),
                           userRecordName: row.text(1), issuedBy: row.text(2), leafKeys: row.blob(3),
                           state: StoredIdentity.State(rawValue: row.text(4)) ?? .removed,
                           boundUser: row.isNull(5) ? nil : row.text(5), createdAt: row.int64(6),
                           boundAt: row.isNull(7) ? nil : row.int64(7))
        }
    }

    func identityChallenge(_ challenge: [UInt8]) throws -> IdentityChallenge? {
        try db.queryOne("""
            SELECT user_record_name, container_id, environment, collaboration, expires_at, used_at
            FROM identity_challenges WHERE challenge = ?
            """, [.blob(challenge)]) { row in
            IdentityChallenge(challenge: challenge, userRecordName: row.text(0), container: row.text(1), environment: row.text(2),
                              collaboration: row.text(3), expiresAt: row.int64(4), usedAt: row.isNull(5) ? nil : row.int64(5))
        }
    }

    func addDeviceKey(user: String, publicKey: [UInt8], at time: Int64) throws -> Bool {
        try db.run("INSERT OR IGNORE INTO device_keys (public_key, user_record_name, created_at) VALUES (?, ?, ?)",
                   [.blob(publicKey), .text(user), .integer(time)])
        return db.changes == 1
    }

    func putIdentity(_ identity: StoredIdentity) throws {
        try db.run("""
            INSERT OR REPLACE INTO collaboration_identities (container_id, environment, collaboration, root_hash, user_record_name,
                issued_by, leaf_keys, state, bound_user, created_at, bound_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(identity.container), .text(identity.environment), .text(identity.collaboration), .blob(identity.rootHash),
                  .text(identity.userRecordName), .text(identity.issuedBy), .blob(identity.leafKeys), .text(identity.state.rawValue),
                  identity.boundUser.map(SQLiteValue.text) ?? .null, .integer(identity.createdAt),
                  identity.boundAt.map(SQLiteValue.integer) ?? .null])
    }

    func addIdentityChallenge(_ challenge: IdentityChallenge, at time: Int64) throws {
        try db.run("DELETE FROM identity_challenges WHERE expires_at < ?", [.integer(time)])
        try db.run("""
            INSERT INTO identity_challenges (challenge, user_record_name, container_id, environment, collaboration, expires_at)
            VALUES (?, ?, ?, ?, ?, ?)
            """, [.blob(challenge.challenge), .text(challenge.userRecordName), .text(challenge.container), .text(challenge.environment),
                  .text(challenge.collaboration), .integer(challenge.expiresAt)])
    }

    func useIdentityChallenge(_ challenge: [UInt8], at time: Int64) throws -> Bool {
        try db.run("UPDATE identity_challenges SET used_at = ? WHERE challenge = ? AND used_at IS NULL", [.integer(time), .blob(challenge)])
        return db.changes == 1
    }
}
