import Foundation
import TandemCore
public import TandemStore

/// Server administrators, who sign in to the web console (`/console/`; decisions C1). Used by
/// `tandem admin add|list|remove` and by the console's first-run setup; safe while a server
/// runs on the same data directory.
public enum ConsoleAdmin {
    /// What `add` did.
    public struct Added: Sendable {
        public var profile: AccountProfile
        /// A new account was made (with a verified email and the password).
        public var created: Bool
        /// The password was set (a new account, or an existing one given a password).
        public var passwordSet: Bool
    }

    /// Makes the account with `email` a server administrator, creating it when there is none.
    /// A new account gets `password` (required) and a verified email: the operator vouches for
    /// it, as with `tandem user verify`. An existing account keeps its password unless one is
    /// given; one without a password needs one.
    ///
    /// - Parameters:
    ///   - passwordHash: Argon2id cost `m=,t=,p=` (decisions A3); nil for the default.
    /// - Throws: `BAD_REQUEST` for a malformed email, a missing password where one is needed, or
    ///   one outside 8–1024 (NIST SP 800-63B minimum, A3 maximum).
    public static func add(email rawEmail: String, password: String?, passwordHash: String? = nil, store: any Store) throws -> Added {
        let email = try EmailAddress.normalize(rawEmail)
        let hasher = Argon2id(parameters: passwordHash.flatMap { Argon2id.Parameters($0) } ?? Argon2id.Parameters())
        return try add(email: email, password: password, hasher: hasher, store: store)
    }

    /// `add` with the server's own hasher (the console's setup step).
    static func add(email: String, password: String?, hasher: Argon2id, store: any Store) throws -> Added {
        let existing = try store.read { reader -> (UserAccount, Bool)? in
            guard let user = try reader.user(recordNameOrEmail: email), user.email?.lowercased() == email else { return nil }
            return (user, try reader.signInMethods(user: user.recordName).contains { $0.kind == PasswordSignIn.kind })
        }
        if password == nil && existing?.1 != true {
            throw CloudKitError.badRequest(existing == nil ? "a new administrator account needs a password"
                                                          : "this account has no password yet: give one")
        }
        let secret = try password.map { try hasher.hash(try PasswordSignIn.password($0, forNewAccount: true)) }
        let now = Clock.milliseconds()
        return try store.write { tx in
            var created = false
            let user: UserAccount
            if let found = try tx.user(recordNameOrEmail: email), found.email?.lowercased() == email {
                user = found
            } else {
                user = try tx.addVerifiedUser(email: email, displayName: nil, at: now)
                created = true
            }
            if let secret {
                try tx.putSignInMethod(user: user.recordName, StoredSignInMethod(kind: PasswordSignIn.kind, subject: "", secret: secret, createdAt: now))
            }
            try tx.setServerAdmin(user: user.recordName, true)
            guard let profile = try tx.profile(user: user.recordName) else { throw CloudKitError(.internalError, "the account vanished") }
            return Added(profile: profile, created: created, passwordSet: secret != nil)
        }
    }

    /// Administrators, oldest first.
    public static func list(store: any Store) throws -> [AccountProfile] {
        try store.read { try $0.serverAdmins() }
    }

    /// Takes administration away from the account (it stays); its console sessions stop at their
    /// next request (each request checks that the account is still an administrator).
    /// - Throws: `NOT_FOUND` when the account is unknown or not an administrator.
    public static func remove(_ key: String, store: any Store) throws {
        try store.write { tx in
            guard let user = try tx.user(recordNameOrEmail: key), try tx.isServerAdmin(user: user.recordName) else {
                throw CloudKitError(.notFound, "no administrator '\(key)'")
            }
            try tx.setServerAdmin(user: user.recordName, false)
        }
    }

    /// Whether the data directory has an administrator (the first-run setup is open until it does).
    public static func exists(store: any Store) throws -> Bool {
        try store.read { try $0.hasServerAdmin() }
    }
}
