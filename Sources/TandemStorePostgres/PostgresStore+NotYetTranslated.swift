internal import TandemCore
internal import TandemStore

// Every requirement not yet translated to PostgreSQL (issue 19 item 3): each throws, naming
// itself, so what is left is greppable (`not yet on PostgreSQL`). Remove a method here when
// its translation lands in its area's file.
extension PostgresStoreTransaction {
    func participations(user: String) throws -> [Participation] { throw StoreError.notYetOnPostgres("participations") }
    func privateZones(owner: String) throws -> [OwnedZone] { throw StoreError.notYetOnPostgres("privateZones") }
    func recordCount(zone: StoredZone) throws -> Int { throw StoreError.notYetOnPostgres("recordCount") }
    func eraseAccount(user: String, at time: Int64) throws -> Int { throw StoreError.notYetOnPostgres("eraseAccount") }
    func profile(user: String) throws -> AccountProfile? { throw StoreError.notYetOnPostgres("profile") }
    func profiles(limit: Int) throws -> [AccountProfile] { throw StoreError.notYetOnPostgres("profiles") }
    func signInMethods(user: String) throws -> [StoredSignInMethod] { throw StoreError.notYetOnPostgres("signInMethods") }
    func signInMethod(kind: String, subject: String) throws -> (user: String, method: StoredSignInMethod)? { throw StoreError.notYetOnPostgres("signInMethod") }
    func hasConsent(user: String, container: String) throws -> Bool { throw StoreError.notYetOnPostgres("hasConsent") }
    func accountLink(hash: [UInt8]) throws -> AccountLink? { throw StoreError.notYetOnPostgres("accountLink") }
    func newestAccountLink(email: String, purpose: AccountLink.Purpose, at time: Int64) throws -> AccountLink? { throw StoreError.notYetOnPostgres("newestAccountLink") }
    func invitationEmails(user: String) throws -> Bool { throw StoreError.notYetOnPostgres("invitationEmails") }
    func addVerifiedUser(email: String, displayName: String?, at time: Int64) throws -> UserAccount { throw StoreError.notYetOnPostgres("addVerifiedUser") }
    func setEmailVerified(user: String, _ verified: Bool) throws { throw StoreError.notYetOnPostgres("setEmailVerified") }
    func setInvitationEmails(user: String, _ on: Bool) throws { throw StoreError.notYetOnPostgres("setInvitationEmails") }
    func putSignInMethod(user: String, _ method: StoredSignInMethod) throws { throw StoreError.notYetOnPostgres("putSignInMethod") }
    func touchSignInMethod(user: String, kind: String, subject: String, at time: Int64) throws { throw StoreError.notYetOnPostgres("touchSignInMethod") }
    func addConsent(user: String, container: String, at time: Int64) throws { throw StoreError.notYetOnPostgres("addConsent") }
    func addAccountLink(_ link: AccountLink) throws { throw StoreError.notYetOnPostgres("addAccountLink") }
    func useAccountLink(hash: [UInt8], at time: Int64) throws -> Bool { throw StoreError.notYetOnPostgres("useAccountLink") }
    func avatarInUse(checksum: String) throws -> Bool { throw StoreError.notYetOnPostgres("avatarInUse") }
    func setAvatar(user: String, _ avatar: Avatar?) throws -> String? { throw StoreError.notYetOnPostgres("setAvatar") }
    func user(signInKind kind: String, subject: String) throws -> UserAccount? { throw StoreError.notYetOnPostgres("user") }
    func addProviderUser(email: String?, displayName: String?, at time: Int64) throws -> UserAccount { throw StoreError.notYetOnPostgres("addProviderUser") }
    func recordLog(zone: StoredZone, name: String) throws -> [RecordLogEntry] { throw StoreError.notYetOnPostgres("recordLog") }
}
