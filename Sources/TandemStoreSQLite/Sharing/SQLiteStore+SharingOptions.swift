import TandemCore
import TandemSQLite
import TandemStore

/// Allowed sharing options per container and per share (decisions R15–R17; PostgreSQL:
/// `PostgresStore+SharingOptions.swift`).
extension SQLiteStoreTransaction {
    func allowedSharingOptions(share: StoredShare) throws -> AllowedSharingOptions {
        try db.queryOne("SELECT allowed_permission, allowed_access FROM shares WHERE id = ?", [.integer(share.key)]) {
            SharingOptionRows.options(permission: $0.text(0), access: $0.text(1))
        } ?? .standard
    }

    func allowedSharingOptions(container: String) throws -> AllowedSharingOptions? {
        try db.queryOne("SELECT allowed_permission, allowed_access FROM containers WHERE id = ?", [.text(container)]) {
            SharingOptionRows.options(permission: $0.text(0), access: $0.text(1))
        }
    }

    func setAllowedSharingOptions(_ options: AllowedSharingOptions, share: StoredShare) throws {
        try db.run("UPDATE shares SET allowed_permission = ?, allowed_access = ? WHERE id = ?",
                   [.text(options.permission.rawValue), .text(options.access.rawValue), .integer(share.key)])
    }

    func setAllowedSharingOptions(_ options: AllowedSharingOptions, container: String) throws -> Bool {
        try db.run("UPDATE containers SET allowed_permission = ?, allowed_access = ? WHERE id = ?",
                   [.text(options.permission.rawValue), .text(options.access.rawValue), .text(container)])
        return db.changes > 0
    }
}
