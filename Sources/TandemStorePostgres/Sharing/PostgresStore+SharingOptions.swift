internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Allowed sharing options per container and per share (decisions R15–R17; SQLite:
/// `SQLiteStore+SharingOptions.swift`).
extension PostgresStoreTransaction {
    func allowedSharingOptions(share: StoredShare) throws -> AllowedSharingOptions {
        try db.queryOne("SELECT allowed_permission, allowed_access FROM shares WHERE id = $1", [.integer(share.key)]) {
            SharingOptionRows.options(permission: try $0.string(0), access: try $0.string(1))
        } ?? .standard
    }

    func allowedSharingOptions(container: String) throws -> AllowedSharingOptions? {
        try db.queryOne("SELECT allowed_permission, allowed_access FROM containers WHERE id = $1", [.text(container)]) {
            SharingOptionRows.options(permission: try $0.string(0), access: try $0.string(1))
        }
    }

    func setAllowedSharingOptions(_ options: AllowedSharingOptions, share: StoredShare) throws {
        try db.run("UPDATE shares SET allowed_permission = $1, allowed_access = $2 WHERE id = $3",
                   [.text(options.permission.rawValue), .text(options.access.rawValue), .integer(share.key)])
    }

    func setAllowedSharingOptions(_ options: AllowedSharingOptions, container: String) throws -> Bool {
        try db.run("UPDATE containers SET allowed_permission = $1, allowed_access = $2 WHERE id = $3",
                   [.text(options.permission.rawValue), .text(options.access.rawValue), .text(container)]) > 0
    }
}
