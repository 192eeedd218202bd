import TandemSQLite
import TandemStore

extension SQLiteStoreTransaction {
    func setAvatar(user: String, _ avatar: Avatar?) throws -> String? {
        guard let previous = try db.queryOne("SELECT avatar_checksum FROM users WHERE record_name = ? AND deleted_at IS NULL",
                                             [.text(user)], { Self.optionalText($0, 0) }) else { throw AvatarAccountGone() }
        try db.run("UPDATE users SET avatar_checksum = ?, avatar_type = ? WHERE record_name = ?",
                   [avatar.map { .text($0.checksum) } ?? .null, avatar.map { .text($0.contentType) } ?? .null, .text(user)])
        return try Avatar.leftUnused(replacing: previous, with: avatar) { try avatarInUse(checksum: $0) }
    }

    func avatarInUse(checksum: String) throws -> Bool {
        try db.queryOne("SELECT 1 FROM users WHERE avatar_checksum = ? LIMIT 1", [.text(checksum)]) { _ in true } ?? false
    }
}
