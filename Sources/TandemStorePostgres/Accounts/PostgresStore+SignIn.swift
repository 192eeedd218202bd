internal import TandemCore
internal import TandemPostgres
internal import TandemStore

/// Profiles, sign-in methods, consents and emailed links (SQLite: the account half of
/// `SQLiteStore+SignIn.swift`; its token half is `PostgresStore+Sessions.swift`).
extension PostgresStoreTransaction {
    static let profileColumns = "record_name, email, email_verified, display_name, created_at"

    static func profile(_ row: PostgresRow) throws -> AccountProfile {
        AccountProfile(recordName: try row.string(0), email: try row.optionalString(1), emailVerified: try row.int64(2) != 0,
                       displayName: try row.optionalString(3), createdAt: try row.int64(4))
    }
}
