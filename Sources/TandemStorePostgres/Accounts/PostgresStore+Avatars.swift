internal import TandemPostgres
internal import TandemStore

/// Avatars (decisions A48, P6; SQLite: `SQLiteStore+Avatars.swift`).
extension PostgresStoreTransaction {
    func setAvatar(user: String, _ avatar: Avatar?) throws -> String? {
        guard let previous = try db.queryOne("SELECT avatar_checksum FROM users WHERE record_name = $1 AND deleted_at IS NULL",
                                             [.text(user)], { try $0.optionalString(0) }) else { throw AvatarAccountGone() }
        try db.run("UPDATE users SET avatar_checksum = $1, avatar_type = $2 WHERE record_name = $3",
                   [.optional(avatar?.checksum), .optional(avatar?.contentType), .text(user)])
        // The checksum this write left unused (P6): the caller erases its file after the commit
        // if no account holds it by then.
        guard let previous, previous != avatar?.checksum, try !avatarInUse(checksum: previous) else { return nil }
        return previous
    }

    func avatarInUse(checksum: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM users WHERE avatar_checksum = $1 LIMIT 1", [.text(checksum)]) { _ in true } ?? false
    }
}
