internal import TandemCore
internal import TandemStore

// Every requirement not yet translated to PostgreSQL (issue 19 item 3): each throws, naming
// itself, so what is left is greppable (`not yet on PostgreSQL`). Remove a method here when
// its translation lands in its area's file.
extension PostgresStoreTransaction {
    func collaboration(id: String, container: String, environment: Environment) throws -> StoredCollaboration? { throw StoreError.notYetOnPostgres("collaboration") }
    func collaboration(url: String, container: String, environment: Environment) throws -> StoredCollaboration? { throw StoreError.notYetOnPostgres("collaboration") }
    func collaborations(urls: [String], container: String, environment: Environment) throws -> [String: StoredCollaboration] { throw StoreError.notYetOnPostgres("collaborations") }
    func collaborationsShared(conversation: String) throws -> [StoredCollaboration] { throw StoreError.notYetOnPostgres("collaborationsShared") }
    func notices(viewer: String, collaboration: String, container: String, environment: Environment) throws -> [StoredConversationEvent] { throw StoreError.notYetOnPostgres("notices") }
    func prompts(owner: String, container: String, environment: Environment, state: StoredMembershipPrompt.State?) throws -> [StoredMembershipPrompt] { throw StoreError.notYetOnPostgres("prompts") }
    func prompt(id: String) throws -> StoredMembershipPrompt? { throw StoreError.notYetOnPostgres("prompt") }
    func putCollaboration(_ collaboration: StoredCollaboration) throws { throw StoreError.notYetOnPostgres("putCollaboration") }
    func clearNotices(viewer: String, collaboration: String, container: String, environment: Environment, through seq: Int64) throws { throw StoreError.notYetOnPostgres("clearNotices") }
    func putPrompt(_ prompt: StoredMembershipPrompt) throws { throw StoreError.notYetOnPostgres("putPrompt") }
    func hasServerAdmin() throws -> Bool { throw StoreError.notYetOnPostgres("hasServerAdmin") }
    func isServerAdmin(user: String) throws -> Bool { throw StoreError.notYetOnPostgres("isServerAdmin") }
    func serverAdmins() throws -> [AccountProfile] { throw StoreError.notYetOnPostgres("serverAdmins") }
    func consoleSession(hash: [UInt8]) throws -> ConsoleSession? { throw StoreError.notYetOnPostgres("consoleSession") }
    func containers() throws -> [ContainerSummary] { throw StoreError.notYetOnPostgres("containers") }
    func apiTokens(container: String) throws -> [StoredAPIToken] { throw StoreError.notYetOnPostgres("apiTokens") }
    func searchProfiles(_ text: String, limit: Int) throws -> [AccountProfile] { throw StoreError.notYetOnPostgres("searchProfiles") }
    func shareSummaries(container: String, environment: String, limit: Int) throws -> [ShareSummary] { throw StoreError.notYetOnPostgres("shareSummaries") }
    func consents(user: String) throws -> [String] { throw StoreError.notYetOnPostgres("consents") }
    func sharedWithYouCounts(container: String, environment: Environment) throws -> SharedWithYouCounts { throw StoreError.notYetOnPostgres("sharedWithYouCounts") }
    func setServerAdmin(user: String, _ on: Bool) throws { throw StoreError.notYetOnPostgres("setServerAdmin") }
    func addConsoleSession(hash: [UInt8], user: String, at time: Int64, expiresAt: Int64, idleMilliseconds: Int64) throws { throw StoreError.notYetOnPostgres("addConsoleSession") }
    func touchConsoleSession(hash: [UInt8], at time: Int64) throws { throw StoreError.notYetOnPostgres("touchConsoleSession") }
    func revokeConsoleSession(hash: [UInt8], at time: Int64) throws -> Bool { throw StoreError.notYetOnPostgres("revokeConsoleSession") }
    func revokeAPIToken(container: String, id: String, at time: Int64) throws -> Bool { throw StoreError.notYetOnPostgres("revokeAPIToken") }
    func serverKey(id: String) throws -> StoredServerKey? { throw StoreError.notYetOnPostgres("serverKey") }
    func serverKeys(container: String) throws -> [StoredServerKey] { throw StoreError.notYetOnPostgres("serverKeys") }
    func addServerKey(_ key: StoredServerKey) throws { throw StoreError.notYetOnPostgres("addServerKey") }
    func revokeServerKey(id: String, at time: Int64) throws -> Bool { throw StoreError.notYetOnPostgres("revokeServerKey") }
    func revokeServerKeys(user: String, at time: Int64) throws -> Int { throw StoreError.notYetOnPostgres("revokeServerKeys") }
}
