import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func setAvatar(user: String, _ avatar: Avatar?) throws -> String? {
        guard let previous = try db.queryOne("SELECT avatar_checksum FROM users WHERE record_name = ? AND deleted_at IS NULL",
                                             [.text(user)], { Self.optionalText($0, 0) }) else { throw AvatarAccountGone() }
        try db.run("UPDATE users SET avatar_checksum = ?, avatar_type = ? WHERE record_name = ?",
                   [avatar.map { .text($0.checksum) } ?? .null, avatar.map { .text($0.contentType) } ?? .null, .text(user)])
        guard let previous, previous != avatar?.checksum, try !avatarInUse(checksum: previous) else { return nil }
        return previous
    }

    func avatarInUse(checksum: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM users WHERE avatar_checksum = ? LIMIT 1", [.text(checksum)]) { _ in true } ?? false
    }
}
