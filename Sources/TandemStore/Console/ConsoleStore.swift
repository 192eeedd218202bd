public import TandemCore

/// A web console session (`tandem_console` cookie), stored by the SHA-256 of its token like
/// every other token (decisions C3).
public struct ConsoleSession: Sendable, Hashable {
    /// 16 hex digits: the first 8 bytes of the token's SHA-256.
    public var id: String
    /// The administrator's user record name.
    public var user: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var lastUsedAt: Int64
    /// The absolute limit.
    public var expiresAt: Int64
    /// The idle limit, milliseconds since the last use.
    public var idleMilliseconds: Int64
    public var revokedAt: Int64?

    public init(id: String, user: String, createdAt: Int64, lastUsedAt: Int64, expiresAt: Int64, idleMilliseconds: Int64, revokedAt: Int64?) {
        self.id = id
        self.user = user
        self.createdAt = createdAt
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.idleMilliseconds = idleMilliseconds
        self.revokedAt = revokedAt
    }

    /// Whether the session still works at `now`: not revoked, before its absolute limit, and
    /// used within its idle limit.
    public func isLive(at now: Int64) -> Bool {
        revokedAt == nil && now < expiresAt && now - lastUsedAt < idleMilliseconds
    }
}

/// An API token (`ckAPIToken`) as the console and `tandem token list --api` show it.
public struct StoredAPIToken: Sendable, Hashable {
    /// 16 hex digits: the first 8 bytes of the token's SHA-256 (names it without revealing it).
    public var id: String
    public var container: String
    /// Origins the sign-in page hands web auth tokens to (decisions A8).
    public var origins: [String]
    /// `message` (nil) or the callback URL.
    public var callback: String?
    public var createdAt: Int64
    public var revokedAt: Int64?

    public init(id: String, container: String, origins: [String], callback: String?, createdAt: Int64, revokedAt: Int64?) {
        self.id = id
        self.container = container
        self.origins = origins
        self.callback = callback
        self.createdAt = createdAt
        self.revokedAt = revokedAt
    }
}

/// A container with what each environment holds.
public struct ContainerSummary: Sendable, Hashable {
    public var id: String
    public var createdAt: Int64
    /// Zones per environment (`development`, `production`), every database and owner.
    public var zones: [String: Int]

    public init(id: String, createdAt: Int64, zones: [String: Int]) {
        self.id = id
        self.createdAt = createdAt
        self.zones = zones
    }
}

/// A share as the console's list shows it (decisions C11).
public struct ShareSummary: Sendable, Hashable {
    public var shortGUID: String
    /// The zone owner's user record name.
    public var owner: String
    public var ownerEmail: String?
    public var zoneName: String
    /// The root record's name; nil for a zone-wide share.
    public var rootName: String?
    /// `NONE`, `READ_ONLY` or `READ_WRITE`.
    public var publicPermission: String
    public var allowsAccessRequests: Bool
    public var accepted: Int
    public var invited: Int
    /// Access requests waiting for the owner.
    public var requests: Int
    public var createdAt: Int64

    public init(shortGUID: String, owner: String, ownerEmail: String?, zoneName: String, rootName: String?, publicPermission: String,
                allowsAccessRequests: Bool, accepted: Int, invited: Int, requests: Int, createdAt: Int64) {
        self.shortGUID = shortGUID
        self.owner = owner
        self.ownerEmail = ownerEmail
        self.zoneName = zoneName
        self.rootName = rootName
        self.publicPermission = publicPermission
        self.allowsAccessRequests = allowsAccessRequests
        self.accepted = accepted
        self.invited = invited
        self.requests = requests
        self.createdAt = createdAt
    }
}

/// Reads for server administrators and the web console.
public protocol ConsoleReading {
    /// Whether any account (not deleted) is a server administrator.
    func hasServerAdmin() throws -> Bool
    func isServerAdmin(user: String) throws -> Bool
    /// Administrators, oldest first.
    func serverAdmins() throws -> [AccountProfile]
    /// The session with this token hash, revoked or expired ones included; nil when unknown.
    func consoleSession(hash: [UInt8]) throws -> ConsoleSession?
    /// Every container, by ID.
    func containers() throws -> [ContainerSummary]
    /// The container's API tokens, revoked ones included, oldest first.
    func apiTokens(container: String) throws -> [StoredAPIToken]
    /// Accounts (not deleted) whose email, display name or given/family name contains `text`
    /// (case-insensitive), oldest first, at most `limit`. Empty text: every account.
    func searchProfiles(_ text: String, limit: Int) throws -> [AccountProfile]
    /// The shares of a container environment, newest first, at most `limit`.
    func shareSummaries(container: String, environment: String, limit: Int) throws -> [ShareSummary]
    /// The containers the user consented to (decisions A2), by ID.
    func consents(user: String) throws -> [String]
    /// Every user's subscriptions in one container environment, oldest first, at most `limit`;
    /// `owner` and `scope` narrow them when given (decisions C41).
    func subscriptions(container: String, environment: Environment, owner: String?, scope: DatabaseType?, limit: Int) throws -> [StoredSubscription]
    /// What Shared with You holds in one container environment (decisions C44).
    func sharedWithYouCounts(container: String, environment: Environment) throws -> SharedWithYouCounts
}

/// Counts of Shared with You's content in a container environment, for the console.
public struct SharedWithYouCounts: Sendable, Hashable {
    public var conversations: Int
    /// Conversation events of kind `message`.
    public var messages: Int
    /// Distinct links per conversation (`conversation_links` rows).
    public var links: Int

    public init(conversations: Int, messages: Int, links: Int) {
        self.conversations = conversations
        self.messages = messages
        self.links = links
    }
}

/// Writes for server administrators and the web console.
public protocol ConsoleWriting: ConsoleReading {
    func setServerAdmin(user: String, _ on: Bool) throws
    func addConsoleSession(hash: [UInt8], user: String, at time: Int64, expiresAt: Int64, idleMilliseconds: Int64) throws
    /// Records a use of the session.
    func touchConsoleSession(hash: [UInt8], at time: Int64) throws
    /// False when it was unknown or already revoked.
    func revokeConsoleSession(hash: [UInt8], at time: Int64) throws -> Bool
    /// Revokes the container's API token `id`; false when there is no such unrevoked token.
    func revokeAPIToken(container: String, id: String, at time: Int64) throws -> Bool
}

/// What the change log holds for one record (decisions C23): its latest change, and each share
/// it left (a participant of that share saw it as deleted then). The log keeps one row per
/// record, so this is not every version.
public struct RecordLogEntry: Sendable, Hashable {
    public enum Kind: String, Sendable {
        case saved, deleted
        /// The record left a share (moved out of its hierarchy, or the share went).
        case leftShare
    }

    public var kind: Kind
    /// The zone change sequence of the change.
    public var sequence: Int64
    /// Milliseconds since 1970.
    public var changedAt: Int64
    public var recordType: String

    public init(kind: Kind, sequence: Int64, changedAt: Int64, recordType: String) {
        self.kind = kind
        self.sequence = sequence
        self.changedAt = changedAt
        self.recordType = recordType
    }
}

/// Reads of the change log for the console's record page.
public protocol RecordLogReading {
    /// The change log's entries for `name` in `zone`, newest first.
    func recordLog(zone: StoredZone, name: String) throws -> [RecordLogEntry]
}
