/// An admin token as `tandem token list --admin` shows it (decisions SC3, A14). Milliseconds
/// since 1970.
public struct StoredAdminToken: Sendable, Hashable {
    /// 16 hex digits: the first 8 bytes of the token's SHA-256, as sessions are named.
    public var id: String
    public var createdAt: Int64
    /// Nil: never expires.
    public var expiresAt: Int64?
    public var revokedAt: Int64?

    public init(id: String, createdAt: Int64, expiresAt: Int64?, revokedAt: Int64?) {
        self.id = id
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
    }

    /// Why the token no longer works at `now`, or nil while it does.
    public func refusal(at now: Int64) -> SessionRefusal? {
        if revokedAt != nil { return SessionRefusal(.revoked, "this admin token was revoked (tandem token revoke --admin)") }
        if let expiresAt, now >= expiresAt { return SessionRefusal(.expired, "this admin token expired; create another with tandem token create --admin") }
        return nil
    }
}
