import TandemSQLite
import TandemStore

/// The share invitation email setting (decisions A31).
extension SQLiteStoreTransaction {
    func invitationEmails(user: String) throws -> Bool {
        try db.queryOne("SELECT invitation_emails FROM users WHERE record_name = ?", [.text(user)]) { $0.int64(0) != 0 } ?? true
    }

    func setInvitationEmails(user: String, _ on: Bool) throws {
        try db.run("UPDATE users SET invitation_emails = ? WHERE record_name = ?", [.integer(on ? 1 : 0), .text(user)])
    }
}
