public import TandemCore

/// An activity invitation (decisions R19): a link and a short join code that bring members of a
/// conversation into its group session, or start one with `activity`. Stored by the SHA-256 of
/// its token and of its code, never the values themselves, like every other token.
public struct StoredActivityInvitation: Sendable, Hashable {
    /// A UUID string: how the creator names it (revoking) without its token.
    public var id: String
    public var container: String
    public var environment: Environment
    public var conversationID: String
    /// The creator's user record name.
    public var creator: String
    /// The activity as the session hub keeps it: `{identifier, metadata, payload}` (JSON text).
    public var activity: String
    /// Milliseconds since 1970.
    public var createdAt: Int64
    public var expiresAt: Int64
    public var revokedAt: Int64?

    public init(id: String, container: String, environment: Environment, conversationID: String, creator: String, activity: String,
                createdAt: Int64, expiresAt: Int64, revokedAt: Int64?) {
        self.id = id
        self.container = container
        self.environment = environment
        self.conversationID = conversationID
        self.creator = creator
        self.activity = activity
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }
}

/// Reads of activity invitations.
public protocol ActivityInvitationReading {
    /// The invitation whose token or join code hashes to `hash` (SHA-256), revoked and expired
    /// ones included (the caller says why one no longer works).
    func activityInvitation(hash: [UInt8]) throws -> StoredActivityInvitation?
}

/// Writes of activity invitations.
public protocol ActivityInvitationWriting: ActivityInvitationReading {
    /// Stores `invitation` under the hashes of its token and code, first forgetting every
    /// invitation that expired more than a day before `invitation.createdAt` (until then its code
    /// stays taken, so a new invitation cannot inherit a link someone still holds).
    /// - Returns: false, having written nothing else, when the token hash, the code hash or the
    ///   ID is already another invitation's (a 40-bit code can collide; the caller draws a new
    ///   token, decisions R41). The transaction stays usable.
    @discardableResult
    func addActivityInvitation(_ invitation: StoredActivityInvitation, tokenHash: [UInt8], codeHash: [UInt8]) throws -> Bool
    /// Revokes invitation `id` of `creator`; false when there is no such unrevoked invitation.
    func revokeActivityInvitation(id: String, creator: String, at time: Int64) throws -> Bool
}
