public import TandemCore

/// Persistence for Tandem: the protocols every backend implements (`TandemStoreSQLite` now, a
/// PostgreSQL store next; decisions P1).
///
/// Services express CloudKit semantics with the primitives of `StoreReading` and
/// `StoreWriting`; a backend only stores and finds. `write` runs its body in one transaction and
/// returns only after it committed; a body that throws leaves nothing behind. A failure of the
/// store itself leaves `read` and `write` as a ``StoreError`` (P2); what a body throws passes
/// through unchanged.
///
/// Isolation (decisions P3): writes are serializable. Writers may run at the same time
/// (PostgreSQL) or one after another (SQLite), but every committed write has the outcome it
/// would have had alone, after the writes committed before it; a backend that cannot keep that
/// for a write fails it, leaving nothing, with ``StoreError/Kind/retryable`` (the client is told
/// `TRY_AGAIN_LATER`). A store runs a body once: it does not retry it itself (bodies are not
/// audited to be free of effects outside the transaction). Services rely on nothing more: not
/// on one writer thread, nor on writes to unrelated rows being ordered.
///
/// Sequences a reader pages by ("after the last one I saw": a zone's change sequence, the feed
/// clock, the conversation timeline) become visible in their order (decisions P4): a change
/// with a smaller sequence never commits after one with a larger, or a follower would skip it.
public protocol Store: Sendable {
    func read<T>(_ body: (any StoreReading) throws -> T) throws -> T
    /// Like `read(_:)`, for a body that usually runs one statement (a lookup by key): a store
    /// may then run that statement alone, without a transaction around it (PostgreSQL: one
    /// statement on the server instead of `BEGIN`, the statement and `COMMIT`; decisions P72).
    /// When the body goes on to a second statement, the store runs it again from its start as a
    /// `read(_:)`, so `body` may run twice and must have no effect but its result.
    func readSingleStatement<T>(_ body: (any StoreReading) throws -> T) throws -> T
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T) throws -> T
    /// Like `write(_:)`; once the write committed, `afterCommit` gets the body's result, before
    /// `write` returns; it is not called when the write failed.
    ///
    /// Order (decisions P3): the hooks of two writes that touched a common row (the same zone's
    /// change sequence, share, conversation, account) run in the order the writes committed, so
    /// hooks of one zone run in the order of its change sequence. Hooks of writes that touched
    /// nothing in common may run in either order. Only writes made through this `Store` value
    /// (this server process) are hooked. A hook must not block (it may run where the next
    /// transaction waits): hand the value to a queue.
    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriting) throws -> T,
                            afterCommit: @escaping @Sendable (T) -> Void) throws -> T
    /// Content-addressed asset files.
    var assets: AssetFiles { get }
    /// Content-addressed avatar files, apart from `assets` so that removing an avatar's file
    /// never touches a record's asset (decisions A48).
    var avatars: AssetFiles { get }
    /// What the start-up log line says about the store: the backend, its settings and where it
    /// is (`sqlite, synchronous=FULL, /srv/tandem/tandem.sqlite`;
    /// `postgres, pool=16, isolation=SERIALIZABLE, postgres://tandem@db/tandem`); never a password.
    var summary: String { get }
    /// Finishes queued writes and releases the database; `read` and `write` fail afterwards.
    func close()
}

extension Store {
    /// A `read(_:)`: a store whose reads cost nothing more for one statement needs no other.
    public func readSingleStatement<T>(_ body: (any StoreReading) throws -> T) throws -> T {
        try read(body)
    }
}

/// A CloudKit environment of a container.
public enum Environment: String, Sendable, CaseIterable, Codable {
    case development
    case production
}

/// A CloudKit database type.
public enum DatabaseType: String, Sendable, CaseIterable {
    case `public`
    case `private`
    case shared
}

/// Which zones a request addresses: one container environment's database of one owner.
/// For the private database `owner` is the user record name; the public database uses
/// `DatabaseScope.publicOwner`.
public struct DatabaseScope: Sendable, Hashable {
    public static let publicOwner = "_public"

    public var container: String
    public var environment: Environment
    public var database: DatabaseType
    public var owner: String

    public init(container: String, environment: Environment, database: DatabaseType, owner: String) {
        self.container = container
        self.environment = environment
        self.database = database
        self.owner = owner
    }
}

/// A zone as stored. `key` is the storage identity used by the other primitives.
public struct StoredZone: Sendable, Hashable {
    public var key: Int64
    public var zoneID: ZoneID
    /// The zone's change sequence: incremented by every record write in the zone.
    public var changeSequence: Int64
    public var createdAt: Int64

    public init(key: Int64, zoneID: ZoneID, changeSequence: Int64, createdAt: Int64) {
        self.key = key
        self.zoneID = zoneID
        self.changeSequence = changeSequence
        self.createdAt = createdAt
    }
}

/// A record that points at another (from a REFERENCE or REFERENCE_LIST field).
public struct Referrer: Sendable, Hashable {
    public var recordName: String
    public var action: Reference.Action

    public init(recordName: String, action: Reference.Action) {
        self.recordName = recordName
        self.action = action
    }
}

/// A person with an account.
public struct UserAccount: Sendable, Hashable {
    /// CloudKit's user record name: `_` followed by 32 lowercase hex digits.
    public var recordName: String
    public var email: String?
    public var givenName: String?
    public var familyName: String?
    /// Stored normalised (digits and a leading `+`).
    public var phoneNumber: String?
    /// Whether others may find this person by email or phone (`users/discover`, `users/lookup/email`).
    public var discoverable: Bool
    /// Their picture, when they set one (decisions A48).
    public var avatar: Avatar?

    public init(recordName: String, email: String?, givenName: String?, familyName: String?, phoneNumber: String? = nil,
                discoverable: Bool = false, avatar: Avatar? = nil) {
        self.recordName = recordName
        self.email = email
        self.givenName = givenName
        self.familyName = familyName
        self.phoneNumber = phoneNumber
        self.discoverable = discoverable
        self.avatar = avatar
    }

    /// The person as others see them.
    public var identity: UserIdentity {
        UserIdentity(userRecordName: recordName, emailAddress: email, phoneNumber: phoneNumber, givenName: givenName, familyName: familyName)
    }
}

/// What a presented token stands for.
public struct TokenGrant: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// Acts as a user (Bearer token or `ckWebAuthToken`).
        case user
        /// Identifies a container (`ckAPIToken`), no user.
        case api
    }
    public var kind: Kind
    public var user: UserAccount?
    /// For a user token: the only container it works in (web auth tokens from sign-in); nil for
    /// CLI-made tokens, which work in every container. For an API token: its container.
    public var container: String?
    /// Session facts of a user token (all nil for CLI-made tokens that never expire).
    public var session = TokenSession()
    /// API tokens: origins the sign-in page may hand a web auth token to (`https://app.example`).
    public var origins: [String] = []
    /// API tokens: how the sign-in page returns the token: nil or `message` (postMessage to the
    /// opener), otherwise a URL to redirect to with `ckWebAuthToken=` appended.
    public var callback: String?

    public init(kind: Kind, user: UserAccount?, container: String?, session: TokenSession = TokenSession(),
                origins: [String] = [], callback: String? = nil) {
        self.kind = kind
        self.user = user
        self.container = container
        self.session = session
        self.origins = origins
        self.callback = callback
    }
}

/// When a user token stops working, and what it was last used for. Milliseconds since 1970.
public struct TokenSession: Sendable, Hashable {
    /// The device the token was issued to, as the client named it.
    public var device: String?
    public var lastUsedAt: Int64?
    /// The absolute limit.
    public var expiresAt: Int64?
    /// The idle limit: the token expires this long after its last use.
    public var idleMilliseconds: Int64?
    public var revokedAt: Int64?
    /// When the token was issued (nil when not read from the store).
    public var createdAt: Int64?
    /// When a newer token replaced this one (rotation, decisions A13): it keeps working for
    /// `rotationGraceMilliseconds` after that.
    public var rotatedAt: Int64?

    /// How long a rotated token keeps working, so requests already on their way with it do not
    /// fail (decisions A13).
    public static let rotationGraceMilliseconds: Int64 = 60_000

    public init(device: String? = nil, lastUsedAt: Int64? = nil, expiresAt: Int64? = nil, idleMilliseconds: Int64? = nil,
                revokedAt: Int64? = nil, createdAt: Int64? = nil, rotatedAt: Int64? = nil) {
        self.device = device
        self.lastUsedAt = lastUsedAt
        self.expiresAt = expiresAt
        self.idleMilliseconds = idleMilliseconds
        self.revokedAt = revokedAt
        self.createdAt = createdAt
        self.rotatedAt = rotatedAt
    }

    /// Why the token no longer works at `now`, or nil while it does.
    public func refusal(at now: Int64, createdAt: Int64? = nil) -> SessionRefusal? {
        if revokedAt != nil { return SessionRefusal(.revoked, "the session was revoked (signed out); sign in again") }
        if let expiresAt, now >= expiresAt { return SessionRefusal(.expired, "the session expired; sign in again") }
        if let idleMilliseconds, let last = lastUsedAt ?? createdAt ?? self.createdAt, now >= last + idleMilliseconds {
            return SessionRefusal(.expired, "the session expired after being idle; sign in again")
        }
        if let rotatedAt, now >= rotatedAt + Self.rotationGraceMilliseconds {
            return SessionRefusal(.expired, "this token was replaced by the one sent in X-Apple-CloudKit-Web-Auth-Token; use that one, or sign in again")
        }
        return nil
    }

    /// Whether a request at `now` should replace this token with a new one (decisions A13): it has
    /// an idle limit (a web auth token from sign-in), was not replaced yet, and half of its idle
    /// limit has passed since it was issued, and it still works.
    public func wantsRotation(at now: Int64) -> Bool {
        guard let idleMilliseconds, let createdAt, rotatedAt == nil, refusal(at: now) == nil else { return false }
        return now - createdAt >= idleMilliseconds / 2
    }
}

/// An asset upload URL issued by `assets/upload`, and what was uploaded to it.
public struct AssetUpload: Sendable, Hashable {
    public var token: String
    public var container: String
    public var environment: Environment
    public var owner: String
    public var recordType: String
    public var fieldName: String
    public var recordName: String?
    public var expiresAt: Int64
    public var checksum: String?
    public var size: Int64?

    public init(token: String, container: String, environment: Environment, owner: String, recordType: String,
                fieldName: String, recordName: String?, expiresAt: Int64, checksum: String? = nil, size: Int64? = nil) {
        self.token = token
        self.container = container
        self.environment = environment
        self.owner = owner
        self.recordType = recordType
        self.fieldName = fieldName
        self.recordName = recordName
        self.expiresAt = expiresAt
        self.checksum = checksum
        self.size = size
    }
}

/// Reads. Every method sees one consistent snapshot for the duration of the `read` body.
public protocol StoreReading: ShareReading, FeedReading, SubscriptionReading, SchemaReading, LinkReading, IdentityReading,
    ConversationReading, HighlightReading, CollaborationReading, AccountReading, AccountDeletionReading, ExternalIdentityReading, ServerKeyReading, ConsoleReading, RecordLogReading, AvatarReading,
    ActivityInvitationReading, PushTokenReading {
    func containerExists(_ id: String) throws -> Bool
    func user(recordNameOrEmail: String) throws -> UserAccount?
    func grant(forTokenHash hash: [UInt8]) throws -> TokenGrant?

    func zone(_ scope: DatabaseScope, name: String) throws -> StoredZone?
    func zones(_ scope: DatabaseScope) throws -> [StoredZone]
    func record(zone: StoredZone, name: String) throws -> Record?
    /// The zone `zoneName` of `scope` and, in it, the record `recordName` with the name of the
    /// share whose hierarchy holds it (its membership, as `recordWithMembership(zone:name:)`),
    /// read by one statement joining both (decisions P63): nil when the zone does not exist,
    /// `found` nil when the record does not. A lookup's one round trip on PostgreSQL. Without
    /// `decodeFields`, as `query`'s. With `schemaETag`, the same statement also reads the etag
    /// of the schema of the zone's container environment (nil when it has none), which a
    /// write's admission reads next (P74); without, `schemaETag` is nil.
    func zoneAndRecord(_ scope: DatabaseScope, zoneName: String, recordName: String, decodeFields: Bool, schemaETag: Bool) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?)?
    func referrers(zone: StoredZone, recordName: String) throws -> [Referrer]
    /// Runs `query` over `zones`: up to `limit` records in the query's order (its sorts, then the
    /// store's record key), each with the cursor that continues after it; with `after`, only
    /// records strictly after that cursor (keyset paging: stable under concurrent writes, and
    /// as cheap deep in a result as at its start). With `memberships`, only records whose share
    /// membership is one of them (the shared database).
    ///
    /// Without `decodeFields`, a record whose fields hold no asset carries only their stored
    /// text (`Record.encodedFields`, which responses copy as is), as the change feed's records
    /// do: for a caller that passes the records on without reading their fields.
    ///
    /// - Throws: `BAD_REQUEST` for an invalid query or a cursor of another sort order.
    func query(_ query: Query, zones: [StoredZone], limit: Int, after: QueryCursor?,
               memberships: [String]?, decodeFields: Bool) throws -> [(record: Record, cursor: QueryCursor)]
    func assetUpload(token: String) throws -> AssetUpload?
}

extension StoreReading {
    /// The zone and one of its records (`zoneAndRecord(_:zoneName:recordName:decodeFields:schemaETag:)`
    /// without the etag): a lookup's read.
    public func zoneAndRecord(_ scope: DatabaseScope, zoneName: String, recordName: String, decodeFields: Bool = true) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?)? {
        try zoneAndRecord(scope, zoneName: zoneName, recordName: recordName, decodeFields: decodeFields, schemaETag: false)
            .map { ($0.zone, $0.found) }
    }

    /// The zone, one of its records with its fields decoded, and the schema's etag: a write's
    /// first read (decisions P74).
    public func zoneRecordAndSchemaETag(_ scope: DatabaseScope, zoneName: String, recordName: String) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?)? {
        try zoneAndRecord(scope, zoneName: zoneName, recordName: recordName, decodeFields: true, schemaETag: true)
    }

    /// `query(_:zones:limit:after:memberships:decodeFields:)` with every record's fields decoded.
    public func query(_ query: Query, zones: [StoredZone], limit: Int, after: QueryCursor?,
                      memberships: [String]?) throws -> [(record: Record, cursor: QueryCursor)] {
        try self.query(query, zones: zones, limit: limit, after: after, memberships: memberships, decodeFields: true)
    }
}

/// Writes, inside one transaction.
public protocol StoreWriting: StoreReading, ShareWriting, FeedWriting, SubscriptionWriting, SchemaWriting, LinkWriting, IdentityWriting,
    ConversationWriting, HighlightWriting, CollaborationWriting, AccountWriting, AccountDeletionWriting, ExternalIdentityWriting, ServerKeyWriting,
    AvatarWriting, ConsoleWriting, ActivityInvitationWriting, PushTokenWriting {
    func createContainer(_ id: String, at time: Int64) throws -> Bool
    /// Adds an account and links share invitations addressed to its email or phone.
    func addUser(email: String, givenName: String?, familyName: String?, phoneNumber: String?, at time: Int64) throws -> UserAccount
    func addToken(hash: [UInt8], grant: TokenGrant, at time: Int64) throws

    /// Returns the zone, creating it when missing.
    func ensureZone(_ scope: DatabaseScope, name: String, at time: Int64) throws -> StoredZone
    /// Deletes a zone with every record in it.
    func deleteZone(_ zone: StoredZone) throws
    /// Advances the zone's change sequence by one and returns the new value.
    func nextChangeSequence(_ zone: StoredZone) throws -> Int64
    /// A one-record write's first read, as `zoneRecordAndSchemaETag(_:zoneName:recordName:)`,
    /// that may also advance the zone's change sequence in the same statement and keep the new
    /// value for this transaction's first `nextChangeSequence` of that zone (decisions P75): one
    /// round trip fewer on PostgreSQL; SQLite, where a statement costs no round trip, only reads.
    /// The numbers the transaction's writes get are the same either way; a transaction that
    /// commits without taking a sequence of the zone leaves a gap in it, which no reader minds
    /// (a change token names a position, not a count). Nil, and nothing advanced, when the zone
    /// does not exist.
    ///
    /// `before` (PostgreSQL; nil on SQLite) is the record's row as read, with a key reserved for
    /// it when absent, for `putRecord(…, before:)` to save it without waiting (P76).
    func zoneRecordAndSchemaETagReservingSequence(_ scope: DatabaseScope, zoneName: String, recordName: String) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?, before: RowBefore?)?
    /// Inserts or replaces a record (its `recordChangeTag`, stamps and fields as given) with the
    /// share whose hierarchy contains it (`membership`), and appends it to the zone's change log
    /// at `sequence`.
    ///
    /// The fields are stored as `record.encodedFields` when set (it must be
    /// `StoredFields.encode(record.fields)`), else encoded here. `indexing` is how the record
    /// type's fields are indexed in the zone's environment, by field name, from the schema the
    /// caller read in this transaction; nil reads it from the store (decisions E27).
    ///
    /// `before` is the record's row before this save as `zoneRecordAndSchemaETagReservingSequence`
    /// read it in this transaction, with nothing of the record written since (nil: the store
    /// reads it). With it, PostgreSQL sends the save with the next statement that waits instead
    /// of waiting for it (decisions P76).
    func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?, indexing: [String: IndexOptions]?,
                   before: RowBefore?) throws
    /// Deletes a record and appends a tombstone at `sequence`.
    func deleteRecord(name: String, recordType: String, zone: StoredZone, sequence: Int64) throws

    /// Runs `body` inside a nested savepoint: if it throws, its writes are rolled back and the
    /// error rethrown; the enclosing transaction goes on.
    func savepoint<T>(_ body: () throws -> T) throws -> T

    func addAssetUpload(_ upload: AssetUpload) throws
    /// Records what was uploaded to an open upload URL; false when it was already used.
    func completeAssetUpload(token: String, checksum: String, size: Int64) throws -> Bool
}

extension StoreWriting {
    /// Only the read: nothing is reserved (SQLite's).
    public func zoneRecordAndSchemaETagReservingSequence(_ scope: DatabaseScope, zoneName: String, recordName: String) throws
        -> (zone: StoredZone, found: (record: Record, membership: String?)?, schemaETag: String?, before: RowBefore?)? {
        try zoneRecordAndSchemaETag(scope, zoneName: zoneName, recordName: recordName).map { ($0.zone, $0.found, $0.schemaETag, nil) }
    }

    /// `putRecord` reading the record type's indexing and the row before from the store.
    public func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?) throws {
        try putRecord(record, zone: zone, sequence: sequence, membership: membership, indexing: nil, before: nil)
    }

    /// `putRecord` reading the row before from the store.
    public func putRecord(_ record: Record, zone: StoredZone, sequence: Int64, membership: String?, indexing: [String: IndexOptions]?) throws {
        try putRecord(record, zone: zone, sequence: sequence, membership: membership, indexing: indexing, before: nil)
    }

    /// Runs `body` so that, if it throws, none of its writes remain (a nested savepoint).
    public func atomically<T>(_ body: () throws -> T) throws -> T {
        try savepoint(body)
    }
}
