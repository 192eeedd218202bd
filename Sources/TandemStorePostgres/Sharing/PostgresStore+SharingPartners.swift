internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Looking people up for sharing, and the people a user shares with (SQLite: `SQLiteStore+Shares.swift`).
extension PostgresStoreTransaction {
    func user(matching lookup: UserIdentity) throws -> UserAccount? {
        if let name = lookup.userRecordName {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE record_name = $1", [.text(name)]) { try Self.userAccount($0) }
        }
        if let email = lookup.emailAddress {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE tandem_fold(email) = tandem_fold($1)", [.text(email)]) { try Self.userAccount($0) }
        }
        if let phone = lookup.phoneNumber {
            return try db.queryOne("SELECT \(Self.userColumns) FROM users WHERE phone = $1",
                                   [.text(PhoneNumbers.normalize(phone))]) { try Self.userAccount($0) }
        }
        return nil
    }

    func sharingPartners(of user: String, container: String, environment: Environment) throws -> [UserAccount] {
        try db.query("""
            WITH mine(share_id) AS (
                SELECT p.share_id FROM share_participants p WHERE p.user_record_name = $1 AND p.status = 'ACCEPTED'
                UNION SELECT s.id FROM shares s JOIN zones z ON z.id = s.zone_id WHERE z.owner = $1
            ), people(name) AS (
                SELECT p.user_record_name FROM share_participants p JOIN mine USING (share_id)
                WHERE p.status = 'ACCEPTED' AND p.user_record_name IS NOT NULL
                UNION SELECT z.owner FROM mine JOIN shares s ON s.id = mine.share_id JOIN zones z ON z.id = s.zone_id
                WHERE z.container_id = $2 AND z.environment = $3
            )
            SELECT \(Self.userColumns) FROM users JOIN people ON people.name = users.record_name
            WHERE users.record_name <> $1 ORDER BY users.record_name
            """, [.text(user), .text(container), .text(environment.rawValue)]) { try Self.userAccount($0) }
    }

    func setDiscoverable(user: String, _ discoverable: Bool) throws {
        try db.run("UPDATE users SET discoverable = $1 WHERE record_name = $2", [.integer(discoverable ? 1 : 0), .text(user)])
    }
}
