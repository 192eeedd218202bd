internal import TandemPostgres
internal import TandemStore

/// The share invitation email setting (decisions A31; SQLite: `SQLiteStore+Invitations.swift`).
extension PostgresStoreTransaction {
    func invitationEmails(user: String) throws -> Bool {
        try db.queryOne("SELECT invitation_emails FROM users WHERE record_name = $1", [.text(user)]) { try $0.int64(0) != 0 } ?? true
    }

    func setInvitationEmails(user: String, _ on: Bool) throws {
        try db.run("UPDATE users SET invitation_emails = $1 WHERE record_name = $2", [.integer(on ? 1 : 0), .text(user)])
    }
}
