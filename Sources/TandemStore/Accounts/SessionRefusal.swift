/// Why a user token no longer works: a stable kind a client can switch on and a reason for
/// people (decisions A12).
public struct SessionRefusal: Sendable, Hashable {
    /// Rendered as the error body's `tandemReason` beside `AUTHENTICATION_FAILED`.
    public enum Kind: String, Sendable {
        /// The idle or absolute limit passed, or a rotated token's grace ended.
        case expired = "SESSION_EXPIRED"
        /// Signed out, revoked (one session or all, a password reset), or the account was deleted.
        case revoked = "SESSION_REVOKED"
    }

    public var kind: Kind
    public var reason: String

    public init(_ kind: Kind, _ reason: String) {
        self.kind = kind
        self.reason = reason
    }
}
