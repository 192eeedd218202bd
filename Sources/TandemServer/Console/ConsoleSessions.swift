import TandemHTTP
import TandemCore
import TandemStore

/// Console sessions (decisions C3): the `tandem_console` cookie (`HttpOnly; SameSite=Strict;
/// Path=/console`, `Secure` over https) holds a random 256-bit token; the store keeps its SHA-256
/// with an idle limit (1 hour) and an absolute limit (12 hours). Every request reads the session
/// and whether its account is (still) a server administrator, so signing out, `tandem admin
/// remove` and deleting the account apply at the next request (decisions C3, C50).
struct ConsoleSessions: Sendable {
    static let cookieName = "tandem_console"
    static let idleMilliseconds: Int64 = 60 * 60 * 1000
    static let lifetimeMilliseconds: Int64 = 12 * 60 * 60 * 1000
    /// Last use is written at most once a minute.
    static let touchMilliseconds: Int64 = 60 * 1000

    let store: any Store

    /// Who the request's console cookie stands for.
    enum Standing {
        /// No cookie, or one naming no live session (unknown, signed out, expired, deleted account).
        case signedOut
        /// A live session; `isAdmin`: its account is a server administrator now (an account that
        /// is not sees only its own data, C50).
        case signedIn(UserAccount, tokenHash: [UInt8], isAdmin: Bool)
    }

    func standing(_ context: RequestContext) throws -> Standing {
        guard let token = FormCSRF.cookies(context.request.head.headers["cookie"])[Self.cookieName], token.hasPrefix("tdc_") else { return .signedOut }
        let hash = Tokens.hash(token)
        let now = Clock.milliseconds()
        let found = try store.read { reader -> (ConsoleSession, UserAccount, Bool)? in
            guard let session = try reader.consoleSession(hash: hash), session.isLive(at: now),
                  let user = try reader.user(recordNameOrEmail: session.user), user.recordName == session.user else { return nil }
            return (session, user, try reader.isServerAdmin(user: user.recordName))
        }
        guard let (session, user, admin) = found else { return .signedOut }
        if now - session.lastUsedAt >= Self.touchMilliseconds {
            try store.write { try $0.touchConsoleSession(hash: hash, at: now) }
        }
        return .signedIn(user, tokenHash: hash, isAdmin: admin)
    }

    /// Starts a session for `user`; returns its Set-Cookie header.
    func issue(user: UserAccount, secure: Bool) throws -> String {
        let token = Tokens.random(prefix: "tdc_")
        let hash = Tokens.hash(token)
        let now = Clock.milliseconds()
        try store.write {
            try $0.addConsoleSession(hash: hash, user: user.recordName, at: now, expiresAt: now + Self.lifetimeMilliseconds,
                                     idleMilliseconds: Self.idleMilliseconds)
        }
        return "\(Self.cookieName)=\(token); Path=/console; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }

    /// Ends the session; returns the Set-Cookie header that clears the cookie.
    func signOut(tokenHash: [UInt8], secure: Bool) throws -> String {
        let now = Clock.milliseconds()
        _ = try store.write { try $0.revokeConsoleSession(hash: tokenHash, at: now) }
        return "\(Self.cookieName)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict\(secure ? "; Secure" : "")"
    }
}
