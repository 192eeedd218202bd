internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Device keys, collaboration identities and identity challenges (SQLite: `SQLiteStore+Identity.swift`).
extension PostgresStoreTransaction {
    func deviceKeys(user: String) throws -> [(publicKey: [UInt8], createdAt: Int64)] {
        try db.query("SELECT public_key, created_at FROM device_keys WHERE user_record_name = $1 ORDER BY created_at, public_key",
                     [.text(user)]) { (publicKey: try $0.bytes(0), createdAt: try $0.int64(1)) }
    }

    func deviceKeyOwner(_ publicKey: [UInt8]) throws -> String? {
        try db.queryOne("SELECT user_record_name FROM device_keys WHERE public_key = $1", [.bytes(publicKey)]) { try $0.string(0) }
    }

    func identities(container: String, environment: String, collaboration: String) throws -> [StoredIdentity] {
        try db.query("""
            SELECT root_hash, user_record_name, issued_by, leaf_keys, state, bound_user, created_at, bound_at
            FROM collaboration_identities WHERE container_id = $1 AND environment = $2 AND collaboration = $3
            ORDER BY created_at, root_hash
            """, [.text(container), .text(environment), .text(collaboration)]) { row in
            StoredIdentity(container: container, environment: environment, collaboration: collaboration, rootHash: try row.bytes(0),
                           userRecordName: try row.string(1), issuedBy: try row.string(2), leafKeys: try row.bytes(3),
                           state: StoredIdentity.State(rawValue: try row.string(4)) ?? .removed,
                           boundUser: try row.optionalString(5), createdAt: try row.int64(6), boundAt: try row.optionalInt64(7))
        }
    }

    func identityChallenge(_ challenge: [UInt8]) throws -> IdentityChallenge? {
        try db.queryOne("""
            SELECT user_record_name, container_id, environment, collaboration, expires_at, used_at
            FROM identity_challenges WHERE challenge = $1
            """, [.bytes(challenge)]) { row in
            IdentityChallenge(challenge: challenge, userRecordName: try row.string(0), container: try row.string(1),
                              environment: try row.string(2), collaboration: try row.string(3), expiresAt: try row.int64(4),
                              usedAt: try row.optionalInt64(5))
        }
    }

    func addDeviceKey(user: String, publicKey: [UInt8], at time: Int64) throws -> Bool {
        try db.run("INSERT INTO device_keys (public_key, user_record_name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                   [.bytes(publicKey), .text(user), .integer(time)]) == 1
    }

    func putIdentity(_ identity: StoredIdentity) throws {
        // SQLite's INSERT OR REPLACE: the row of the same collaboration and root hash is replaced whole.
        try db.run("""
            INSERT INTO collaboration_identities (container_id, environment, collaboration, root_hash, user_record_name,
                issued_by, leaf_keys, state, bound_user, created_at, bound_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            ON CONFLICT (container_id, environment, collaboration, root_hash) DO UPDATE SET
                user_record_name = EXCLUDED.user_record_name, issued_by = EXCLUDED.issued_by, leaf_keys = EXCLUDED.leaf_keys,
                state = EXCLUDED.state, bound_user = EXCLUDED.bound_user, created_at = EXCLUDED.created_at,
                bound_at = EXCLUDED.bound_at
            """, [.text(identity.container), .text(identity.environment), .text(identity.collaboration), .bytes(identity.rootHash),
                  .text(identity.userRecordName), .text(identity.issuedBy), .bytes(identity.leafKeys), .text(identity.state.rawValue),
                  .optional(identity.boundUser), .integer(identity.createdAt), .optional(identity.boundAt)])
    }

    func addIdentityChallenge(_ challenge: IdentityChallenge, at time: Int64) throws {
        try db.run("DELETE FROM identity_challenges WHERE expires_at < $1", [.integer(time)])
        try db.run("""
            INSERT INTO identity_challenges (challenge, user_record_name, container_id, environment, collaboration, expires_at)
            VALUES ($1, $2, $3, $4, $5, $6)
            """, [.bytes(challenge.challenge), .text(challenge.userRecordName), .text(challenge.container), .text(challenge.environment),
                  .text(challenge.collaboration), .integer(challenge.expiresAt)])
    }

    func useIdentityChallenge(_ challenge: [UInt8], at time: Int64) throws -> Bool {
        try db.run("UPDATE identity_challenges SET used_at = $1 WHERE challenge = $2 AND used_at IS NULL",
                   [.integer(time), .bytes(challenge)]) == 1
    }
}
